#!/bin/sh
# Profile-accuracy tests: run test programs with known allocation sites under the shim, in
# several configurations (compilers, unwinders, backends), and check the JSON reports' numbers.
# Prints "ok NAME" / "FAIL NAME: ..." and a final "N passed, M failed".
# HEAPPROF_SHIM=path tests another build of the library (as in test/integration/run.sh).
set -u
top=$(cd "$(dirname "$0")/../.." && pwd)
cd "$top" || exit 1
shim=${HEAPPROF_SHIM:-$top/build/libheapprof_shim.so}
report=$top/build/heapprof-report-san
[ -x "$report" ] || report=$top/build/heapprof-report
out=$top/build/profiling
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
pass=0
fail=0
run_after=
ok() { echo "ok $1"; pass=$((pass + 1)); }
bad() { echo "FAIL $1: $2"; fail=$((fail + 1)); }

mkdir -p "$out/gcc" "$out/clang"
CC_FP="gcc -O1 -g -fno-omit-frame-pointer -fno-optimize-sibling-calls"
for cc in gcc clang; do
    cxx=g++
    [ $cc = clang ] && cxx=clang++
    $cc -O2 -g -fno-omit-frame-pointer -pthread -Iinclude -o "$out/$cc/sites" test/profiling/sites.c || bad "build-$cc" "sites.c"
    # Without frame pointers (as Debian builds its packages): only cfi and libunwind see past
    # the allocation site.
    $cc -O2 -g -fomit-frame-pointer -pthread -Iinclude -o "$out/$cc/sites-nofp" test/profiling/sites.c || bad "build-$cc" "sites.c nofp"
    # C++17 for both compilers (clang 14 defaults to C++14: no aligned operator new).
    $cxx -std=c++17 -O2 -g -fno-omit-frame-pointer -o "$out/$cc/sites_cxx" test/profiling/sites_cxx.cc || bad "build-$cc" "sites_cxx.cc"
done

# check NAME KIND PROFILE [EXTRA]: report to JSON, compare numbers.
check() {
    cname=$1 kind=$2 prof=$3
    shift 3
    if [ ! -f "$prof" ]; then bad "$cname" "no profile $prof"; return; fi
    if ! "$report" --format json -o "$tmp/r.json" "$prof" 2>"$tmp/r.err"; then
        bad "$cname" "heapprof-report failed: $(head -c 300 "$tmp/r.err")"
        return
    fi
    if msg=$(python3 test/profiling/check_sites.py "$kind" "$tmp/r.json" "$@" 2>&1); then
        ok "$cname"
    else
        bad "$cname" "$(echo "$msg" | head -5 | tr '\n' ';')"
    fi
}

# dumps_in DIR: how many on-demand dumps (p.PID.hpf.N) DIR holds.
dumps_in() {
    n=0
    for f in "$1"/p.*.hpf.*; do [ -f "$f" ] && n=$((n + 1)); done
    echo "$n"
}

# check_dumps NAME KIND MIN FILE...: every profile FILE passes check KIND, and there are at
# least MIN interval dumps of run NAME.
check_dumps() {
    cname=$1 kind=$2 min=$3
    shift 3
    n=$(dumps_in "$tmp/$cname")
    if [ "$n" -lt "$min" ]; then
        bad "$cname" "$n interval dumps, expected at least $min"
        return
    fi
    fails=
    for f in "$@"; do
        if ! "$report" --format json -o "$tmp/r.json" "$f" 2>"$tmp/r.err" ||
            ! python3 test/profiling/check_sites.py "$kind" "$tmp/r.json" >"$tmp/c.out" 2>&1; then
            fails="$fails $(basename "$f"): $(cat "$tmp/r.err" "$tmp/c.out" | head -2 | tr '\n' ' ')"
        fi
    done
    if [ -z "$fails" ]; then ok "$cname"; else bad "$cname" "$fails"; fi
}

# run NAME OPTIONS PROGRAM ARGS...: under the shim with profiles in $tmp/NAME ($run_after:
# libraries preloaded after the shim, such as an allocator for it to use).
run() {
    name=$1 opts=$2
    shift 2
    rm -rf "$tmp/$name"
    mkdir -p "$tmp/$name"
    timeout -k 5 120 env HEAPPROF_OPTIONS="output=$tmp/$name/p.%p.hpf:$opts" LD_PRELOAD="$shim${run_after:+ $run_after}" "$@" >"$tmp/$name.out" 2>"$tmp/$name.err"
    st=$?
    if [ $st -ne 0 ]; then
        bad "$name" "exit status $st ($(head -c 300 "$tmp/$name.err"))"
        return 1
    fi
    return 0
}

# run_says NAME OPTIONS LINE PROGRAM ARGS...: run (above), and the program's output must have
# LINE, a line of its own (the program checks itself and prints what it found otherwise).
run_says() {
    rname=$1 ropts=$2 line=$3
    shift 3
    if run "$rname" "$ropts" "$@"; then
        if grep -qx "$line" "$tmp/$rname.out"; then
            ok "$rname"
        else
            bad "$rname" "$(head -c 300 "$tmp/$rname.out" | tr '\n' ';')"
        fi
    else
        echo "    $(head -c 300 "$tmp/$rname.out" | tr '\n' ';')"
    fi
}

for cc in gcc clang; do
    for unw in fp libunwind cfi; do
        name=sites-$cc-$unw
        if run "$name" "dump_signal=12:unwinder=$unw" "$out/$cc/sites" fork signal; then
            parent=$(ls "$tmp/$name" | sed -n 's/^p\.\([0-9]*\)\.hpf$/\1/p' | sort -n | head -1)
            # The parent's pid is the smaller one only most of the time: find it by its dumps.
            for f in "$tmp/$name"/p.*.hpf.1; do parent=$(basename "$f" | sed 's/^p\.\([0-9]*\)\.hpf\.1$/\1/'); done
            check "$name-exit" exit "$tmp/$name/p.$parent.hpf" deep
            check "$name-api" api "$tmp/$name/p.$parent.hpf.1"
            check "$name-signal" signal "$tmp/$name/p.$parent.hpf.2"
            child=$(ls "$tmp/$name" | sed -n 's/^p\.\([0-9]*\)\.hpf$/\1/p' | grep -vx "$parent" | head -1)
            check "$name-fork-child" child "$tmp/$name/p.$child.hpf" "$parent"
        fi
    done
    for unw in libunwind cfi; do
        name=sites-nofp-$cc-$unw
        if run "$name" "dump_signal=12:unwinder=$unw" "$out/$cc/sites-nofp" signal; then
            check "$name" exit "$(ls "$tmp/$name"/p.*.hpf | head -1)" deep
        fi
    done
    if run "cxx-$cc" "" "$out/$cc/sites_cxx"; then
        check "cxx-$cc" cxx "$(ls "$tmp/cxx-$cc"/p.*.hpf | head -1)"
    fi
done

# sites.c on each allocator: preloaded after the shim (its backend, "next"), and before it
# (it comes first in symbol lookup: patched, backend/patch.c); glibc through backend=glibc.
lib_of() {
    case $1 in
    jemalloc) ls /usr/lib/*/libjemalloc.so.2 2>/dev/null | head -1 ;;
    tcmalloc) ls /usr/lib/*/libtcmalloc_minimal.so.4 2>/dev/null | head -1 ;;
    mimalloc) ls /usr/lib/*/libmimalloc.so.2 2>/dev/null | head -1 ;;
    esac
}
# sites_with NAME PRELOAD OPTIONS BINARY: BINARY's signal mode under LD_PRELOAD=PRELOAD, exact
# counts at exit.
sites_with() {
    rm -rf "$tmp/$1"; mkdir -p "$tmp/$1"
    if timeout -k 5 120 env HEAPPROF_OPTIONS="output=$tmp/$1/p.%p.hpf:dump_signal=12:$3" \
        LD_PRELOAD="$2" "$4" signal >/dev/null 2>"$tmp/$1.err"; then
        check "$1" exit "$(ls "$tmp/$1"/p.*.hpf | head -1)"
    else
        bad "$1" "exit status $?: $(head -c 300 "$tmp/$1.err")"
    fi
}
for be in glibc jemalloc tcmalloc mimalloc; do
    for order in second first; do
        opt="" pre=""
        case $be/$order in
        glibc/first) continue ;;
        glibc/second) opt="backend=glibc" ;;
        *) pre=$(lib_of $be) ;;
        esac
        if [ $order = second ]; then name=sites-backend-$be preload="$shim $pre"; else name=preloaded-first-$be preload="$pre $shim"; fi
        if [ $be != glibc ] && [ -z "$pre" ]; then bad "$name" "lib$be not installed"; continue; fi
        sites_with "$name" "$preload" "$opt" "$out/gcc/sites"
    done
done

# Two copies of the shim (two builds, or one under another path) preloaded at once: the first
# in LD_PRELOAD profiles, the other forwards to the allocator after it and writes nothing, and
# says so in one line. (Before, both profiled: two profiles per process, the second one of
# the first one's blocks, with its frames on top of every stack.)
mkdir -p "$tmp/shim-copy"
cp "$shim" "$tmp/shim-copy/libheapprof_shim.so"
for order in copy-second copy-first; do
    name=two-shims-$order
    if [ $order = copy-second ]; then first=$shim second=$tmp/shim-copy/libheapprof_shim.so; else first=$tmp/shim-copy/libheapprof_shim.so second=$shim; fi
    rm -rf "$tmp/$name"; mkdir -p "$tmp/$name"
    HEAPPROF_OPTIONS="output=$tmp/$name/p.%p.hpf:dump_signal=12" LD_PRELOAD="$first $second" \
        "$out/gcc/sites" signal >/dev/null 2>"$tmp/$name.err"
    st=$?
    files=$(ls "$tmp/$name" | grep -v '\.hpf\.[0-9]*$')
    case $(grep '^heapprof:' "$tmp/$name.err") in
    "heapprof: another copy of heapprof's shim ($first) comes before this one ($second) and profiles the process; this one only forwards to "*libc.so.6)
        case $files in
        p.*.hpf) [ $st -eq 0 ] && check "$name" exit "$tmp/$name/$files" || bad "$name" "status $st" ;;
        *) bad "$name" "profiles: $(echo $files), expected one" ;;
        esac ;;
    *) bad "$name" "status $st, expected one line from heapprof: $(head -c 400 "$tmp/$name.err")" ;;
    esac
done
# heapprof-run puts its shim in place of one in the user's LD_PRELOAD: one profile, no warning.
# The script itself and its helpers (sed, od, readelf) run without that preload: they left a
# profile each in the working directory.
name=two-shims-heapprof-run
rm -rf "$tmp/$name" "$tmp/$name.cwd"; mkdir -p "$tmp/$name" "$tmp/$name.cwd"
(cd "$tmp/$name.cwd" && LD_PRELOAD="$tmp/shim-copy/libheapprof_shim.so" "$top/scripts/heapprof-run" -q \
    -o "$tmp/$name/p.%p.hpf" --options dump_signal=12 -- "$out/gcc/sites" signal >/dev/null 2>"$tmp/$name.err")
st=$?
files=$(ls "$tmp/$name" | grep -v '\.hpf\.[0-9]*$')
stray=$(ls "$tmp/$name.cwd")
case $st/$files in
0/p.*.hpf)
    if grep -q '^heapprof' "$tmp/$name.err"; then
        bad "$name" "$(head -c 300 "$tmp/$name.err")"
    elif [ -n "$stray" ]; then
        bad "$name" "profiles of heapprof-run's own processes: $(echo $stray | head -c 200)"
    else
        check "$name" exit "$tmp/$name/$files"
    fi ;;
*) bad "$name" "status $st, profiles: $(echo $files), expected one; $(head -c 300 "$tmp/$name.err")" ;;
esac

# Allocators linked into the program itself (the executable defines malloc, so LD_PRELOAD
# cannot come first): a simple one of the program's own, jemalloc and tcmalloc linked
# statically. The shim patches their entry points; the numbers must be those of any other run.
for cc in gcc clang; do
    cxx=g++
    [ $cc = clang ] && cxx=clang++
    for al in own own8 wrap jemalloc tcmalloc; do
        name=linked-$al-$cc
        case $al in
        own) extra="test/profiling/own_malloc.c" ;;
        own8) extra="-DOWN_MALLOC_ALIGN8 test/profiling/own_malloc.c" ;; # blocks 8-byte aligned
        wrap) extra="test/profiling/wrap_malloc.c" ;;
        jemalloc) extra="-Wl,-Bstatic -ljemalloc_pic -Wl,-Bdynamic -lm -ldl -lstdc++" ;;
        tcmalloc) extra="-Wl,-Bstatic -ltcmalloc_minimal -Wl,-Bdynamic -lstdc++ -lm" ;;
        esac
        # shellcheck disable=SC2086
        if ! $cc -O2 -g -fno-omit-frame-pointer -pthread -Iinclude -o "$out/$cc/sites-$al" test/profiling/sites.c $extra; then
            bad "$name" "cannot build sites.c with $al"
            continue
        fi
        if ! nm -D --defined-only "$out/$cc/sites-$al" | grep -q ' T malloc$'; then
            bad "$name" "the executable does not define malloc"
            continue
        fi
        if run "$name" "dump_signal=12" "$out/$cc/sites-$al" fork signal; then
            for f in "$tmp/$name"/p.*.hpf.1; do parent=$(basename "$f" | sed 's/^p\.\([0-9]*\)\.hpf\.1$/\1/'); done
            check "$name-exit" exit "$tmp/$name/p.$parent.hpf"
            check "$name-signal" signal "$tmp/$name/p.$parent.hpf.2"
            child=$(ls "$tmp/$name" | sed -n 's/^p\.\([0-9]*\)\.hpf$/\1/p' | grep -vx "$parent" | head -1)
            check "$name-fork-child" child "$tmp/$name/p.$child.hpf" "$parent"
            if grep -q . "$tmp/$name.err"; then bad "$name-quiet" "$(head -c 300 "$tmp/$name.err")"; else ok "$name-quiet"; fi
        fi
    done
    # A program with its own allocator that also defines (and exports) heapprof_dump, say as a
    # fallback for runs without the shim: its allocator is patched as any other, not taken for
    # another copy of the shim (which the shim would only forward to). Its own heapprof_dump
    # answers the program's call (-1): the signal's dump is the first.
    name=linked-own-api-$cc
    if $cc -O2 -g -fno-omit-frame-pointer -pthread -Iinclude -rdynamic -DOWN_DEFINES_API -o "$out/$cc/sites-ownapi" \
        test/profiling/sites.c test/profiling/own_malloc.c; then
        rm -rf "$tmp/$name"; mkdir -p "$tmp/$name"
        if HEAPPROF_OPTIONS="output=$tmp/$name/p.%p.hpf:dump_signal=12" LD_PRELOAD="$shim" \
            "$out/$cc/sites-ownapi" signal >/dev/null 2>"$tmp/$name.err"; then
            f=$(ls "$tmp/$name"/p.*.hpf | head -1)
            check "$name-exit" exit "$f"
            check "$name-signal" signal "$f.1"
        else
            bad "$name" "exit status $?: $(head -c 300 "$tmp/$name.err")"
        fi
    else
        bad "$name" "cannot build sites.c with own_malloc.c -DOWN_DEFINES_API"
    fi
    # tcmalloc's own operator new and delete, linked in.
    name=linked-tcmalloc-cxx-$cc
    if $cxx -std=c++17 -O2 -g -fno-omit-frame-pointer -o "$out/$cc/sites_cxx-tcmalloc" test/profiling/sites_cxx.cc \
        -Wl,-Bstatic -ltcmalloc_minimal -Wl,-Bdynamic -lm -pthread; then
        if run "$name" "" "$out/$cc/sites_cxx-tcmalloc"; then
            check "$name" cxx "$(ls "$tmp/$name"/p.*.hpf | head -1)"
        fi
    else
        bad "$name" "cannot build sites_cxx.cc with tcmalloc"
    fi
done
# A library's constructor allocates from the program's own allocator (linked in) before the
# shim's constructor would run in the loader's usual order: the shim must have patched it first
# (-z initfirst), or those blocks are missing and their frees look foreign.
if gcc -O1 -g -fPIC -shared -o "$out/gcc/libctor_lib.so" test/profiling/ctor_lib.c; then
    for al in own jemalloc; do
        name=ctor-alloc-$al
        case $al in
        own) extra="test/profiling/own_malloc.c" ;;
        jemalloc) extra="-Wl,-Bstatic -ljemalloc_pic -Wl,-Bdynamic -lm -ldl -lstdc++ -pthread" ;;
        esac
        # shellcheck disable=SC2086
        if ! gcc -O1 -g -o "$out/gcc/ctor_alloc-$al" test/profiling/ctor_alloc.c $extra \
            -L"$out/gcc" -lctor_lib -Wl,-rpath,"$out/gcc"; then
            bad "$name" "cannot build ctor_alloc.c with $al"
            continue
        fi
        if run "$name" "" "$out/gcc/ctor_alloc-$al"; then
            check "$name" ctor_alloc "$(ls "$tmp/$name"/p.*.hpf | head -1)"
            if grep -q . "$tmp/$name.err"; then bad "$name-quiet" "$(head -c 300 "$tmp/$name.err")"; else ok "$name-quiet"; fi
        fi
    done
else
    bad ctor-alloc "cannot build ctor_lib.c"
fi

# The program starts with its environment, arguments and name (the shim's constructor comes
# before libc's initialiser), under each unwinder and with an allocator preloaded first.
gcc -O1 -g -o "$out/gcc/startup_env" test/profiling/startup_env.c
for pre in "" jemalloc tcmalloc; do
    for unw in cfi libunwind; do
        name=startup-env${pre:+-$pre}-$unw
        preload=$shim
        if [ -n "$pre" ]; then
            lib=$(lib_of $pre)
            if [ -z "$lib" ]; then bad "$name" "lib$pre not installed"; continue; fi
            preload="$lib $shim"
        fi
        rm -rf "$tmp/$name" && mkdir -p "$tmp/$name"
        if STARTUP_ENV_CHECK=yes HEAPPROF_OPTIONS="output=$tmp/$name/p.%p.hpf:unwinder=$unw" LD_PRELOAD="$preload" \
            "$out/gcc/startup_env" arg >"$tmp/$name.out" 2>"$tmp/$name.err" && grep -qx ok "$tmp/$name.out" &&
            [ -f "$(ls "$tmp/$name"/p.*.hpf 2>/dev/null | head -1)" ]; then
            ok "$name"
        else
            bad "$name" "$(cat "$tmp/$name.out" "$tmp/$name.err" | head -c 300 | tr '\n' ' ')"
        fi
    done
done

# The shim opened by dlopen after clearenv: its constructor must not run the program's preinit
# functions again (it does that only when it runs before libc's initialiser).
gcc -O1 -g -o "$out/gcc/dlopen_clearenv" test/profiling/dlopen_clearenv.c -ldl
name=dlopen-clearenv
if (cd "$tmp" && "$out/gcc/dlopen_clearenv" "$shim") >"$tmp/$name.out" 2>"$tmp/$name.err" && grep -qx ok "$tmp/$name.out"; then
    ok "$name"
else
    bad "$name" "$(cat "$tmp/$name.out" "$tmp/$name.err" | head -c 300 | tr '\n' ' ')"
fi

# A program built without -fPIE whose code takes the allocation functions' addresses (PLT entries
# of its own stand for them, unbound while binding is lazy), with jemalloc preloaded first.
gcc -O2 -g -fno-omit-frame-pointer -fno-pie -no-pie -Wl,-z,lazy -pthread -Iinclude -o "$out/gcc/sites-nopie" \
    test/profiling/sites.c test/profiling/take_addr.c
sites_with preloaded-first-nopie "$(lib_of jemalloc) $shim" "" "$out/gcc/sites-nopie"

# An allocator the program also calls past its entry points (Chromium's allocator shim): left
# alone, with a message, and the program runs as without the shim.
gcc -O1 -g -rdynamic -o "$out/gcc/chromium_like" test/profiling/chromium_like.c
name=linked-chromium-like
if HEAPPROF_OPTIONS="output=$tmp/$name.%p.hpf" LD_PRELOAD="$shim" "$out/gcc/chromium_like" >"$tmp/$name.out" 2>"$tmp/$name.err" &&
    grep -qx ok "$tmp/$name.out" && grep -q "Chromium's allocator shim" "$tmp/$name.err"; then
    ok "$name"
else
    bad "$name" "$(cat "$tmp/$name.out" "$tmp/$name.err" | head -c 300 | tr '\n' ' ')"
fi

# An allocator of the program's with only malloc and free: calloc still works, patched or not.
gcc -O1 -g -o "$out/gcc/min_malloc" test/profiling/min_malloc.c
for o in "" ":patch_allocator=0"; do
    name=linked-min${o:+-nopatch}
    if HEAPPROF_OPTIONS="output=$tmp/$name.%p.hpf$o" LD_PRELOAD="$shim" "$out/gcc/min_malloc" >"$tmp/$name.out" 2>"$tmp/$name.err" &&
        grep -qx ok "$tmp/$name.out"; then
        ok "$name"
    else
        bad "$name" "$(cat "$tmp/$name.out" "$tmp/$name.err" | head -c 300 | tr '\n' ' ')"
    fi
done

# The tuning and statistics calls a linked-in allocator lacks still reach glibc's, as without
# the shim (tcmalloc has no malloc_info; t_mallapi checks they all answer).
for al in tcmalloc; do
    name=linked-mallapi-$al
    extra="-Wl,-Bstatic -ltcmalloc_minimal -Wl,-Bdynamic -lstdc++ -lm"
    # shellcheck disable=SC2086
    if ! gcc -O1 -g -pthread -Itest/progs -o "$out/gcc/t_mallapi-$al" test/progs/t_mallapi.c $extra; then
        bad "$name" "cannot build t_mallapi.c with $al"
        continue
    fi
    "$out/gcc/t_mallapi-$al" >"$tmp/$name.bare" 2>&1
    bst=$?
    HEAPPROF_OPTIONS="output=$tmp/$name.%p.hpf" LD_PRELOAD="$shim" "$out/gcc/t_mallapi-$al" >"$tmp/$name.shim" 2>&1
    sst=$?
    if [ $bst -ne $sst ] || ! cmp -s "$tmp/$name.bare" "$tmp/$name.shim"; then
        bad "$name" "bare status $bst, shim $sst: $(diff "$tmp/$name.bare" "$tmp/$name.shim" | head -c 300 | tr '\n' ' ')"
    else
        ok "$name"
    fi
done

# patch_allocator=0: the shim says why it records nothing, and the program runs as before
# (the wrapping one too: its calls of __libc_malloc reach glibc, not the shim and back).
for al in own wrap; do
    name=linked-nopatch-$al
    rm -rf "$tmp/$name"; mkdir -p "$tmp/$name"
    timeout -k 5 60 env HEAPPROF_OPTIONS="output=$tmp/$name/p.%p.hpf:patch_allocator=0" LD_PRELOAD="$shim" \
        "$out/gcc/sites-$al" >/dev/null 2>"$tmp/$name.err"
    st=$?
    if [ $st -ne 0 ] || ! grep -q "not patched (patch_allocator=0)" "$tmp/$name.err" || [ -n "$(ls "$tmp/$name")" ]; then
        bad "$name" "status $st, files: $(ls "$tmp/$name" | tr '\n' ' '); stderr: $(head -c 300 "$tmp/$name.err")"
    else
        ok "$name"
    fi
done

# killed_result NAME SIG STATUS KIND: the run ended by SIG (a name: TERM, ...), and its profile
# passes check KIND with the signal's number.
killed_result() {
    case $2 in HUP) num=1 ;; INT) num=2 ;; ABRT) num=6 ;; SEGV) num=11 ;; TERM | RERAISE | RESETHAND | SYSV) num=15 ;; esac
    if [ "$3" -ne $((128 + num)) ]; then
        bad "$1" "exit status $3, expected $((128 + num)) (SIG$2): $(head -c 300 "$tmp/$1.err")"
    else
        check "$1" "$4" "$(ls "$tmp/$1"/p.*.hpf | head -1)" $num
    fi
}

# Ended by a signal (busy in the allocator when it comes, often): the profile is written, and
# the process still dies of that signal.
gcc -O1 -g -o "$out/gcc/killed" test/profiling/killed.c
for sig in TERM INT HUP TERM INT HUP; do
    name=killed-$sig
    rm -rf "$tmp/$name"
    mkdir -p "$tmp/$name"
    HEAPPROF_OPTIONS="output=$tmp/$name/p.%p.hpf" LD_PRELOAD="$shim" "$out/gcc/killed" $sig >"$tmp/$name.out" 2>"$tmp/$name.err" &
    pid=$!
    for i in $(seq 100); do
        grep -q ready "$tmp/$name.out" 2>/dev/null && break
        sleep 0.05
    done
    sleep 0.05
    kill -$sig $pid
    wait $pid
    killed_result "$name" $sig $? killed
done

# Crashes: abort() (where an uncaught std::bad_alloc ends) and a fault still leave the profile,
# and still end the process by that signal; so does SIGTERM to a handler of the program's that
# restores SIG_DFL and raises it again.
for sig in ABRT SEGV RERAISE RESETHAND SYSV; do
    name=killed-$sig
    rm -rf "$tmp/$name"
    mkdir -p "$tmp/$name"
    (ulimit -c 0; HEAPPROF_OPTIONS="output=$tmp/$name/p.%p.hpf" LD_PRELOAD="$shim" exec "$out/gcc/killed" $sig) >"$tmp/$name.out" 2>"$tmp/$name.err"
    killed_result "$name" $sig $? killed_early
done

# dump_signal naming a fault's signal: refused in one line (a dump handler returning from a
# fault runs again at once: a crashing program wrote dumps for ever, 16,000 in 5 s), so the
# crash still ends the process with its exit profile and no numbered dumps.
for sig in SEGV 11; do
    name=dump-signal-fault-$sig
    rm -rf "$tmp/$name"
    mkdir -p "$tmp/$name"
    (ulimit -c 0; exec timeout -s KILL 20 env HEAPPROF_OPTIONS="output=$tmp/$name/p.%p.hpf:dump_signal=$sig" \
        LD_PRELOAD="$shim" "$out/gcc/killed" SEGV) >"$tmp/$name.out" 2>"$tmp/$name.err"
    st=$?
    if [ "$(grep -c '^heapprof: option dump_signal=11 (SIGSEGV) is a fault' "$tmp/$name.err")" != 1 ]; then
        bad "$name" "expected one warning: $(head -c 300 "$tmp/$name.err")"
    elif ls "$tmp/$name" | grep -q '\.hpf\.[0-9]'; then
        bad "$name" "$(ls "$tmp/$name" | grep -c '\.hpf\.[0-9]') numbered dumps"
    else
        killed_result "$name" SEGV $st killed_early
    fi
done

# dump_signal given a handler by the program: the program's handler gets the signal (as bare),
# the shim says once that the signal writes no dumps from then on; before it, one dump.
gcc -O1 -g -o "$out/gcc/own_handler" test/profiling/own_handler.c
name=dump-signal-taken
rm -rf "$tmp/$name"; mkdir -p "$tmp/$name"
HEAPPROF_OPTIONS="output=$tmp/$name/p.%p.hpf:dump_signal=USR2" LD_PRELOAD="$shim" "$out/gcc/own_handler" >"$tmp/$name.out" 2>"$tmp/$name.err"
st=$?
dumps=$(ls "$tmp/$name" | grep -c '\.hpf\.[0-9]*$')
if [ $st -ne 0 ] || [ "$(cat "$tmp/$name.out")" != "handler got 2, still installed: 1" ]; then
    bad "$name" "status $st, output: $(head -c 200 "$tmp/$name.out")"
elif [ "$(grep -c '^heapprof: the program set its own disposition for SIGUSR2 (dump_signal=12)' "$tmp/$name.err")" != 1 ] ||
    [ "$(grep -c '^heapprof:' "$tmp/$name.err")" != 1 ]; then
    bad "$name" "expected one line from heapprof: $(head -c 300 "$tmp/$name.err")"
elif [ "$dumps" != 1 ]; then
    bad "$name" "$dumps numbered dumps, expected 1 (before the program's handler)"
else
    ok "$name"
fi

# dump_signal on a signal the process inherited ignored (nohup's SIGHUP): it stays ignored, as
# the program and what it execs would have it (a handler is not inherited across exec: the
# shim's made a nohup'ed program's children die of SIGHUP), said once.
gcc -O1 -g -o "$out/gcc/ignored_sig" test/profiling/ignored_sig.c
name=dump-signal-ignored
rm -rf "$tmp/$name"; mkdir -p "$tmp/$name"
sh -c 'trap "" HUP; exec "$@"' sh env HEAPPROF_OPTIONS="output=$tmp/$name/p.%p.hpf:dump_signal=HUP" \
    LD_PRELOAD="$shim" "$out/gcc/ignored_sig" >"$tmp/$name.out" 2>"$tmp/$name.err"
st=$?
if [ $st -ne 0 ] || [ "$(tr '\n' ' ' <"$tmp/$name.out")" != "HUP ignored: 1 alive " ]; then
    bad "$name" "status $st, output: $(head -c 200 "$tmp/$name.out")"
elif [ "$(grep -c '^heapprof:' "$tmp/$name.err")" != 1 ] ||
    ! grep -q '^heapprof: dump_signal=1: SIGHUP is ignored in this process (inherited)' "$tmp/$name.err"; then
    bad "$name" "expected one line from heapprof: $(head -c 300 "$tmp/$name.err")"
elif ! "$report" "$(ls "$tmp/$name"/p.*.hpf | head -1)" >/dev/null 2>"$tmp/r.err"; then
    bad "$name" "no readable exit profile: $(head -c 200 "$tmp/r.err")"
else
    ok "$name"
fi

# A vfork child killed while it allocates leaves its parent's profiling intact.
gcc -O1 -g -pthread -o "$out/gcc/vfork_kill" test/profiling/vfork_kill.c
name=vfork-kill
if run "$name" "" "$out/gcc/vfork_kill"; then
    if ! grep -q "child killed by 15" "$tmp/$name.out" || ! grep -q "parent TERM SIG_DFL" "$tmp/$name.out"; then
        bad "$name" "$(tr '\n' ' ' <"$tmp/$name.out")"
    elif [ "$(ls "$tmp/$name" | wc -l)" -ne 1 ]; then
        bad "$name" "files: $(ls "$tmp/$name" | tr '\n' ' '); stderr: $(head -c 200 "$tmp/$name.err")"
    else
        check "$name" vfork_kill "$(ls "$tmp/$name"/p.*.hpf | head -1)"
    fi
fi

# jemalloc's own API (mallocx, rallocx, sdallocx, dallocx) in a program linked with jemalloc,
# as a shared library and linked in (then the executable keeps mallocx and friends out of its
# dynamic symbol table: the patcher finds them in its full one).
for cc in gcc clang; do
    for how in shared static; do
        name=ext-api-$cc
        jl="-ljemalloc"
        if [ $how = static ]; then
            name=ext-api-linked-$cc
            jl="-Wl,-Bstatic -ljemalloc_pic -Wl,-Bdynamic -lm -ldl -lstdc++ -pthread"
        fi
        # shellcheck disable=SC2086
        if $cc -O2 -g -o "$out/$cc/ext_api-$how" test/profiling/ext_api.c $jl; then
            if run "$name" "" "$out/$cc/ext_api-$how"; then
                check "$name" ext_api "$(ls "$tmp/$name"/p.*.hpf | head -1)"
            fi
        else
            bad "$name" "cannot build test/profiling/ext_api.c ($how)"
        fi
    done
done

# mimalloc's own API (mi_malloc, mi_rezalloc, mi_strdup, heaps and their destruction) in a
# program linked with libmimalloc: after the shim (its backend) and preloaded before it
# (patched).
for cc in gcc clang; do
    if $cc -O2 -g -o "$out/$cc/mi_api" test/profiling/mi_api.c -lmimalloc; then
        for where in after before; do
            name=mi-api-$where-$cc
            saved_shim=$shim
            [ $where = before ] && shim="/usr/lib/x86_64-linux-gnu/libmimalloc.so.2 $shim"
            if run "$name" "" "$out/$cc/mi_api"; then
                check "$name" mi_api "$(ls "$tmp/$name"/p.*.hpf | head -1)"
            fi
            shim=$saved_shim
        done
    else
        bad "$name" "cannot build test/profiling/mi_api.c"
    fi
done

# Evictions from a tiny HIB table are merged back exactly; a program that closes every
# descriptor and opens its own file does not get profile records written into it.
$CC_FP -o "$out/gcc/evict" test/profiling/evict.c
name=evict
if run "$name" "hib_table_size=16:hib_table_ways=2:thread_cache_size=16:stack_depth=256" "$out/gcc/evict" "$tmp/evict-own.txt"; then
    check "$name" evict "$(ls "$tmp/$name"/p.*.hpf | head -1)"
fi
# Evicted records wait in memory and go to the file a thousand at a time: the system calls
# that write them (and that check the file and the size limit first) are counted under strace,
# 12 rounds making over 2,000 evictions, so the file is written to before the exit dump too.
name=evict-batched
rm -rf "$tmp/$name"; mkdir -p "$tmp/$name"
HEAPPROF_OPTIONS="output=$tmp/$name/p.%p.hpf:hib_table_size=16:hib_table_ways=2:thread_cache_size=16:stack_depth=256" \
    timeout -k 5 120 strace -f -qq -e trace=write,fstat,newfstatat,prlimit64 -o "$tmp/$name.trace" \
    -E LD_PRELOAD="$shim" "$out/gcc/evict" "$tmp/$name.own" 12 >"$tmp/$name.out" 2>"$tmp/$name.err"
st=$?
if [ $st -ne 0 ]; then
    bad "$name" "status $st: $(head -c 300 "$tmp/$name.err")"
elif ! "$report" --format json -o "$tmp/$name.json" "$tmp/$name"/p.*.hpf 2>"$tmp/$name.rerr"; then
    bad "$name" "heapprof-report failed: $(head -c 300 "$tmp/$name.rerr")"
else
    evicted=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["summary"]["evicted_hibs"])' "$tmp/$name.json")
    calls=$(wc -l <"$tmp/$name.trace")
    if [ "$evicted" -le 2048 ]; then
        bad "$name" "only $evicted records evicted, expected over 2,048"
    elif [ "$calls" -gt 100 ]; then
        bad "$name" "$calls writes, fstat and prlimit64 calls for $evicted evicted records"
    else
        check "$name" evict "$tmp/$name"/p.*.hpf 12
    fi
fi

# Walks that start on a coroutine's stack or an alternate signal stack stay inside mapped
# memory, in every unwinder.
gcc -O2 -g -o "$out/gcc/stacks" test/profiling/stacks.c
for unw in cfi fp libunwind; do
    name=stacks-$unw
    if run "$name" "unwinder=$unw" "$out/gcc/stacks"; then
        check "$name" stacks "$(ls "$tmp/$name"/p.*.hpf | head -1)"
    fi
done

# Stacks that share their innermost frames at the same stack pointers and part further out,
# changing all the time, in two threads: every allocation is recorded under its own path,
# whatever the walk's caches kept (same_depth.c), for both compilers, with the unwinders that
# see the whole stack of code without frame pointers.
for cc in gcc clang; do
    $cc -O2 -g -pthread -o "$out/$cc/same_depth" test/profiling/same_depth.c || bad "build-$cc" "same_depth.c"
    for unw in cfi libunwind; do
        name=same-depth-$cc-$unw
        if run "$name" "unwinder=$unw" "$out/$cc/same_depth"; then
            check "$name" same_depth "$(ls "$tmp/$name"/p.*.hpf | head -1)" "$tmp/$name.out"
        fi
    done
done

# A real program with thousands of stacks, most of them many frames deep and coming back over
# and over (python3 with every object a malloc): the default unwinder, with its walk cache and
# site cache, attributes every allocation to the same stack as libunwind, which walks each one
# afresh (up to the few allocations only one of them makes).
export PYTHONMALLOC=malloc PYTHONHASHSEED=0
for unw in cfi libunwind; do
    if run "python3-$unw" "unwinder=$unw" /usr/bin/python3 "$top/bench/py_workload.py" 2; then
        "$report" --format json -o "$tmp/python3-$unw.json" "$(ls "$tmp/python3-$unw"/p.*.hpf | head -1)" \
            2>"$tmp/python3-$unw.rerr" || bad "python3-$unw" "heapprof-report failed: $(head -c 300 "$tmp/python3-$unw.rerr")"
    fi
done
unset PYTHONMALLOC PYTHONHASHSEED
if [ -s "$tmp/python3-cfi.json" ] && [ -s "$tmp/python3-libunwind.json" ]; then
    if msg=$(python3 test/profiling/check_sites.py agree "$tmp/python3-cfi.json" "$tmp/python3-libunwind.json" 4 2>&1); then
        ok python3-cfi-agrees-with-libunwind
    else
        bad python3-cfi-agrees-with-libunwind "$(echo "$msg" | head -3 | tr '\n' ';')"
    fi
fi

# A signal handler allocating and freeing while main allocates at full speed, so that most of
# its calls interrupt the shim recording one of main's: every block is recorded at its site,
# with its free, for both compilers and every unwinder (with cfi and fp, nothing goes
# unrecorded; libunwind's own allocations are not the program's). Over an allocator that
# handlers may call (bump_malloc.c).
gcc -O2 -fPIC -shared -o "$out/gcc/libbump_malloc.so" test/profiling/bump_malloc.c || bad build-gcc bump_malloc.c
for cc in gcc clang; do
    $cc -O2 -g -fno-omit-frame-pointer -o "$out/$cc/handler_allocs" test/profiling/handler_allocs.c ||
        bad "build-$cc" "handler_allocs.c"
    for unw in cfi fp libunwind; do
        name=handler-allocs-$cc-$unw
        run_after=$out/gcc/libbump_malloc.so
        if run "$name" "unwinder=$unw" "$out/$cc/handler_allocs"; then
            strict=strict
            [ $unw = libunwind ] && strict=
            check "$name" handler "$(ls "$tmp/$name"/p.*.hpf | head -1)" $(cat "$tmp/$name.out") $strict
        fi
        run_after=
    done
done

# 4096 contexts whose stacks share most of their frames: each one's stack comes back from the
# frame tree exactly, and the profile stays small (format version 2), for both compilers and
# every unwinder that sees the whole stack (the program keeps its frame pointers).
for cc in gcc clang; do
    $cc -O1 -g -fno-omit-frame-pointer -fno-optimize-sibling-calls -o "$out/$cc/tree" test/profiling/tree.c || bad "build-$cc" "tree.c"
    for unw in cfi fp libunwind; do
        name=tree-$cc-$unw
        if run "$name" "unwinder=$unw" "$out/$cc/tree"; then
            prof=$(ls "$tmp/$name"/p.*.hpf | head -1)
            check "$name" tree "$prof" "$(wc -c <"$prof")"
        fi
    done
done

# A frame of generated code (no call frame information, a frame pointer) between an allocating
# function and main: the cfi walk steps through it with its frame pointer.
gcc -O2 -g -o "$out/gcc/jit_frames" test/profiling/jit_frames.c
name=jit-frames
if run "$name" "" "$out/gcc/jit_frames"; then
    check "$name" jit_frames "$(ls "$tmp/$name"/p.*.hpf | head -1)"
fi

# Many threads at once: every block counted, metadata far below the budget, no warning.
gcc -O2 -g -pthread -o "$out/gcc/many_threads" test/profiling/many_threads.c
name=many-threads
if run "$name" "" "$out/gcc/many_threads"; then
    if grep -q "budget" "$tmp/$name.err"; then
        bad "$name" "$(head -c 300 "$tmp/$name.err")"
    else
        check "$name" many_threads "$(ls "$tmp/$name"/p.*.hpf | head -1)"
    fi
fi

# The same with stacks cut at two frames: every allocation counts as truncated, each thread's
# count kept in its cache until it publishes (as its allocations are).
name=many-threads-truncated
if run "$name" "stack_depth=2" "$out/gcc/many_threads"; then
    check "$name" many_threads_truncated "$(ls "$tmp/$name"/p.*.hpf | head -1)"
fi

# Workers cancelled (pthread_cancel) while dumps are written: every round ends, and the exit
# profile counts every block the workers made. A small thread cache keeps each worker moving
# entries out of it, which waits inside the shim while a dump is written.
gcc -O2 -g -pthread -Iinclude -o "$out/gcc/cancel" test/profiling/cancel.c
name=cancel
if run "$name" "thread_cache_size=16" "$out/gcc/cancel"; then
    n=$(sed -n 's/^blocks \([0-9]*\)$/\1/p' "$tmp/$name.out")
    if [ -z "$n" ]; then
        bad "$name" "no block count in the output: $(head -c 200 "$tmp/$name.out")"
    else
        check "$name" cancel "$(ls "$tmp/$name"/p.*.hpf | head -1)" "$n"
    fi
fi

# The program's descriptor numbers are its own under every unwinder: libunwind's pipe (it checks
# addresses by writing them into it) took 3 and 4, and a program's first file became 5.
gcc -O2 -g -o "$out/gcc/fd_numbers" test/profiling/fd_numbers.c
for unw in cfi fp libunwind; do
    run_says fd-numbers-$unw "unwinder=$unw" "fd numbers ok" "$out/gcc/fd_numbers"
done

# Allocation calls that succeed leave errno alone under every unwinder, with dumps on the way
# (libunwind's pipe reads left EAGAIN in it).
gcc -O2 -g -pthread -Iinclude -o "$out/gcc/errno_kept" test/profiling/errno_kept.c
for unw in cfi fp libunwind; do
    run_says errno-kept-$unw "unwinder=$unw:dump_signal=12" "errno kept" "$out/gcc/errno_kept"
done

# A library closed before the dump is still named in the profile.
gcc -O1 -g -fPIC -shared -o "$out/gcc/libunload_plugin.so" test/profiling/unload_plugin.c
gcc -O1 -g -o "$out/gcc/unload" test/profiling/unload.c
name=unload
if run "$name" "" "$out/gcc/unload" "$out/gcc/libunload_plugin.so"; then
    check "$name" unload "$(ls "$tmp/$name"/p.*.hpf | head -1)"
fi

# heapprof_dump() from a signal handler that interrupts the shim neither hangs nor loses counts.
gcc -O2 -g -Iinclude -o "$out/gcc/sigdump" test/profiling/sigdump.c
name=sigdump
if run "$name" "" "$out/gcc/sigdump"; then
    n=$(dumps_in "$tmp/$name")
    if [ "$n" -ge 2 ]; then
        check "$name" sigdump "$(ls "$tmp/$name"/p.*.hpf | head -1)"
    else
        bad "$name" "$n dumps written, expected at least 2"
    fi
fi

# A library loaded where a closed one was is unwound with its own rules (reload.c); closed
# libraries opened by a relative path are named in the profile too.
gcc -shared -fPIC -DFRAME=0x88 -DSIZE=1111 -o "$out/gcc/libreload_a.so" test/profiling/reload_plugin.S
gcc -shared -fPIC -DFRAME=0x1008 -DSIZE=2222 -o "$out/gcc/libreload_b.so" test/profiling/reload_plugin.S
gcc -O1 -g -o "$out/gcc/reload" test/profiling/reload.c
name=reload
rel=${out#"$top"/}/gcc
if run "$name" "" "$out/gcc/reload" "$rel/libreload_a.so" "$rel/libreload_b.so"; then
    check "$name" reload "$(ls "$tmp/$name"/p.*.hpf | head -1)"
fi

# Periodic dumps: a program that allocates now and then for ~300 ms, idles for 600 ms and
# allocates for ~300 ms more, at dump_interval_ms=100, leaves several, and no two numbered
# dumps in a row with the same totals (a tick at which nothing changed since the last one
# writes none). Each is a complete profile.
gcc -O1 -g -o "$out/gcc/interval_idle" test/profiling/interval_idle.c
name=interval
if run "$name" "dump_interval_ms=100" "$out/gcc/interval_idle"; then
    n=$(dumps_in "$tmp/$name")
    if [ "$n" -ge 3 ]; then
        check "$name-dump" interval "$(ls "$tmp/$name"/p.*.hpf.1 | head -1)"
        prev= same= i=1
        while [ -f "$(ls "$tmp/$name"/p.*.hpf.$i 2>/dev/null | head -1)" ]; do
            "$report" --format json -o "$tmp/iv.json" "$(ls "$tmp/$name"/p.*.hpf.$i | head -1)" 2>/dev/null
            cur=$(python3 -c 'import json,sys; s=json.load(open(sys.argv[1]))["summary"]; print(s["total_allocs"], s["total_frees"], s["total_bytes"])' "$tmp/iv.json")
            [ "$cur" = "$prev" ] && same="$same $((i - 1))/$i"
            prev=$cur i=$((i + 1))
        done
        if [ -z "$same" ]; then ok "$name-no-repeats"; else bad "$name-no-repeats" "dumps with the same totals:$same"; fi
    else
        bad "$name" "$n interval dumps, expected at least 3"
    fi
fi
# An idle program (sleep, 450 ms) leaves one interval dump, not one per tick.
name=interval-idle
if run "$name" "dump_interval_ms=100" sleep 0.45; then
    n=$(dumps_in "$tmp/$name")
    if [ "$n" -eq 1 ]; then ok "$name"; else bad "$name" "$n interval dumps, expected 1"; fi
fi

# Periodic dumps while four threads allocate and free at full speed: each dump is one moment
# (its summary agrees with its contexts), as is the exit profile.
gcc -O1 -g -pthread -o "$out/gcc/busy_dumps" test/profiling/busy_dumps.c
name=busy-dumps
if run "$name" "dump_interval_ms=25:peak_slack_kb=1" "$out/gcc/busy_dumps"; then
    check_dumps "$name" consistent 5 "$tmp/$name"/p.*.hpf*
fi
# The same with blocks freed by other threads than their own: every dump takes all the threads'
# caches at one moment, or a free counted without its allocation (alloc_count one above allocs).
name=busy-dumps-shared
if run "$name" "dump_interval_ms=5:peak_slack_kb=1" "$out/gcc/busy_dumps" shared; then
    check_dumps "$name" consistent 20 "$tmp/$name"/p.*.hpf*
fi

# A process that execs while its interval thread writes a dump of 4,096 contexts (back to back,
# at 1 ms): the exec cuts one off wherever it is. Every numbered dump must be whole (each is
# written as N.tmp and named when its end is written; the old build left a numbered file
# without its end in 3 runs of 10). Ten runs, from 3 to 15 ms of dumps before the exec.
# Under a seccomp filter the shim did not see installed (a container's) numbered dumps are
# written in place (no call they did not make before): then the test does not apply.
gcc -O2 -g -o "$out/gcc/exec_dumping" test/profiling/exec_dumping.c
ename=exec-during-dump # (run sets name)
fails="" dumps=0 failed_run=""
seccomp=$(sed -n 's/^Seccomp:[[:space:]]*//p' /proc/self/status 2>/dev/null)
[ "${seccomp:-0}" = 0 ] || failed_run=1
[ "${seccomp:-0}" = 0 ] || echo "skip $ename: this process runs under a seccomp filter (Seccomp: $seccomp)"
for i in 1 2 3 4 5 6 7 8 9 10; do
    [ -z "$failed_run" ] || break
    if ! run "$ename-$i" "dump_interval_ms=1" "$out/gcc/exec_dumping" $((i % 5 + 1)); then
        failed_run=1 # (said by run)
        continue
    fi
    for f in "$tmp/$ename-$i"/p.*.hpf.*; do
        case $f in
        *.tmp) continue ;;
        *"*") continue ;; # no dump at all in this run
        esac
        dumps=$((dumps + 1))
        "$report" --format json -o "$tmp/ed.json" "$f" 2>"$tmp/ed.err" ||
            fails="$fails $(basename "$f"): $(head -c 150 "$tmp/ed.err");"
    done
done
if [ -n "$failed_run" ]; then
    :
elif [ -n "$fails" ]; then
    bad "$ename" "$(echo "$fails" | head -c 400)"
elif [ $dumps -lt 10 ]; then
    bad "$ename" "$dumps numbered dumps in ten runs, expected at least 10"
else
    ok "$ename"
fi

# The same four threads ended by SIGTERM: the profile written on the way down is one moment too
# (the three other threads keep allocating while the signal's thread writes it).
name=busy-killed
rm -rf "$tmp/$name"
mkdir -p "$tmp/$name"
HEAPPROF_OPTIONS="output=$tmp/$name/p.%p.hpf:peak_slack_kb=1" LD_PRELOAD="$shim" "$out/gcc/busy_dumps" >"$tmp/$name.out" 2>"$tmp/$name.err" &
pid=$!
sleep 0.5
kill -TERM $pid
wait $pid
st=$?
f=$(ls "$tmp/$name"/p.*.hpf 2>/dev/null | head -1)
if [ $st -ne 143 ]; then
    bad "$name" "exit status $st, expected 143 (SIGTERM): $(head -c 300 "$tmp/$name.err")"
elif [ -z "$f" ]; then
    bad "$name" "no profile"
else
    check "$name" consistent "$f"
fi

# Interval dumps of python3 building and parsing a large JSON text (a single-threaded program
# making new contexts all the time): every dump holds only contexts with allocations in it
# (python3's early dumps had up to a dozen rows of zeros: contexts made after the dump's flush).
name=interval-python
if [ -x /usr/bin/python3 ] &&
    run "$name" "dump_interval_ms=20" env PYTHONMALLOC=malloc /usr/bin/python3 -c \
        "import json; x = [{'a': i, 'b': str(i) * 5} for i in range(200000)]; print(len(json.loads(json.dumps(x))))"; then
    check_dumps "$name" interval 3 "$tmp/$name"/p.*.hpf.*
fi

# unwinder=libunwind, first allocations by four threads at once: one loads libunwind, the others
# wait for it (the previous shim gave the allocations made meanwhile one-frame stacks).
gcc -O1 -g -pthread -o "$out/gcc/unw_race" test/profiling/unw_race.c
for i in 1 2; do
    name=unw-race-$i
    if run "$name" "unwinder=libunwind" "$out/gcc/unw_race"; then
        check "$name" unw_race "$(ls "$tmp/$name"/p.*.hpf | head -1)"
    fi
done

# Allocation sites inlined into their callers, from both compilers: every inlined function
# has a frame of its own in the report, at its own line. Also with split DWARF (the skeleton
# unit in the program, the rest in a .dwo file beside it: built in its own directory).
for cc in gcc clang; do
    for dw in "" -split; do
        name=inlined$dw-$cc
        flags=-g
        [ -n "$dw" ] && flags="-g -gsplit-dwarf"
        if (cd "$out/$cc" && $cc -O2 $flags -o "inlined$dw" "$top/test/profiling/inlined.c"); then
            if run "$name" "" "$out/$cc/inlined$dw"; then
                check "$name" inlined "$(ls "$tmp/$name"/p.*.hpf | head -1)" test/profiling/inlined.c
            fi
        else
            bad "$name" "cannot build inlined.c ($flags)"
        fi
    done
done

# Periodic dumps across fork: the child runs its own interval thread, as a two-thread process.
gcc -O1 -g -o "$out/gcc/interval_fork" test/profiling/interval_fork.c
name=interval-fork
if run "$name" "dump_interval_ms=50" "$out/gcc/interval_fork"; then
    # The program says which pid is which (a listing sorts 10004 before 9999).
    parent=$(sed -n 's/^interval_fork: parent \([0-9]*\) child.*/\1/p' "$tmp/$name.out")
    child=$(sed -n 's/^interval_fork: parent [0-9]* child \([0-9]*\) .*/\1/p' "$tmp/$name.out")
    first=$(ls "$tmp/$name"/p."$child".hpf.* 2>/dev/null | head -1)
    if [ -n "$child" ] && [ -n "$first" ]; then
        check "$name" interval_child "$first" "$parent"
        # The child ends with _exit: its exit profile is written all the same.
        check "$name-child-exit" forked_exit "$tmp/$name/p.$child.hpf" "$parent"
    else
        bad "$name" "no interval dump of the child: $(ls "$tmp/$name" | tr '\n' ' ')"
    fi
fi

# A forked child that starts a thread has its descriptor table grown up to the shim's own
# descriptor numbers before the second thread runs (growing it later, with two threads, made
# the kernel wait for an RCU grace period: 14 ms a child here).
gcc -O1 -g -pthread -o "$out/gcc/fork_fdtable" test/profiling/fork_fdtable.c
name=fork-fdtable
if run "$name" "" "$out/gcc/fork_fdtable"; then
    nofile=$(ulimit -n)
    want=1000
    [ "$nofile" != unlimited ] && [ $((nofile / 4 * 3)) -lt $want ] && want=$((nofile / 4 * 3))
    got=$(sed -n 's/^fdsize //p' "$tmp/$name.out")
    if [ -n "$got" ] && [ "$got" -gt "$want" ]; then ok "$name"; else bad "$name" "FDSize '$got' in the child, expected above $want"; fi
fi

# The exit profile waits for an interval dump in progress instead of being skipped.
gcc -O1 -g -o "$out/gcc/exit_race" test/profiling/exit_race.c
name=exit-race
missing=0
for i in 1 2 3 4 5 6 7 8 9 10; do
    rm -rf "$tmp/$name"
    mkdir -p "$tmp/$name"
    HEAPPROF_OPTIONS="output=$tmp/$name/p.%p.hpf:dump_interval_ms=1" LD_PRELOAD="$shim" \
        timeout -k 5 60 "$out/gcc/exit_race" 2>/dev/null
    f=$(ls "$tmp/$name"/p.*.hpf 2>/dev/null | head -1)
    if [ -z "$f" ] || ! "$report" --format json "$f" 2>/dev/null | grep -q '"dump_reason": "exit"'; then
        missing=$((missing + 1))
    fi
done
if [ $missing -eq 0 ]; then ok "$name"; else bad "$name" "$missing of 10 runs left no complete exit profile"; fi

# _exit in a vfork child writes nothing, and the parent's exit profile is whole.
gcc -O1 -g -o "$out/gcc/vfork_exit" test/profiling/vfork_exit.c
name=vfork-exit
if run "$name" "" "$out/gcc/vfork_exit"; then
    n=$(ls "$tmp/$name" | wc -l)
    if [ "$n" -eq 1 ]; then
        check "$name" vfork_exit "$(ls "$tmp/$name"/p.*.hpf | head -1)"
    else
        bad "$name" "$n files, expected the parent's profile only: $(ls "$tmp/$name" | tr '\n' ' ')"
    fi
fi

# fork, then exec at once, in a threaded program with a full HIB table: no profile file of the
# replaced image is left behind, only the parent's and the exec'd program's, both complete.
# fork-exec-rounds: the same after each of 128 rounds of 16 new contexts, so that the parent
# has a spool file and any number of evicted records waiting in memory at some fork: 130 files
# (the parent's, 129 of /bin/true), and the parent's 2,048 contexts exact.
gcc -O1 -g -fno-omit-frame-pointer -pthread -o "$out/gcc/fork_exec" test/profiling/fork_exec.c
for rounds in 0 128; do
    name=fork-exec
    opts="hib_table_size=16:hib_table_ways=2"
    want=2
    if [ $rounds != 0 ]; then
        name=fork-exec-rounds opts="$opts:thread_cache_size=16" want=130
    fi
    if run "$name" "$opts" "$out/gcc/fork_exec" $rounds; then
        files=$(ls "$tmp/$name")
        nbad=0
        for f in $files; do "$report" "$tmp/$name/$f" >/dev/null 2>&1 || nbad=$((nbad + 1)); done
        if [ "$(echo "$files" | wc -l)" -ne $want ] || [ $nbad -ne 0 ] || ! grep -q "child status 0" "$tmp/$name.out"; then
            bad "$name" "$(echo "$files" | wc -l) files, $want expected, $nbad unreadable; $(head -c 200 "$tmp/$name.out")"
        elif [ $rounds != 0 ]; then
            check "$name" fork_exec_rounds "$(ls -S "$tmp/$name"/p.*.hpf | head -1)"
        else
            ok "$name"
        fi
    fi
done

# fork while four other threads are alive with unflushed caches: every profile of the children
# (two API dumps and the exit of one, which then runs threads of its own on the caches the
# dumps folded, another child's and its grandchild's) counts the other
# threads' blocks exactly once, with the main thread's context whose blocks another thread
# freed still at its true maximum; the exec'd child leaves only the new image's profile.
gcc -O1 -g -fno-omit-frame-pointer -pthread -Iinclude -o "$out/gcc/fork_threads" test/profiling/fork_threads.c
name=fork-threads
if run "$name" "" "$out/gcc/fork_threads" /bin/true; then
    o=$tmp/$name.out
    parent=$(sed -n 's/^parent //p' "$o") dump=$(sed -n 's/^dump //p' "$o")
    forker=$(sed -n 's/^fork //p' "$o") grand=$(sed -n 's/^grandchild //p' "$o")
    exec=$(sed -n 's/^exec //p' "$o")
    files=$(ls "$tmp/$name" | tr '\n' ' ')
    want="p.$dump.hpf p.$dump.hpf.1 p.$dump.hpf.2 p.$exec.hpf p.$forker.hpf p.$grand.hpf p.$parent.hpf"
    if ! grep -qx "fork_threads done" "$o"; then
        bad "$name" "$(head -c 300 "$o" "$tmp/$name.err" | tr '\n' ' ')"
    elif [ "$(echo $files | tr ' ' '\n' | sort | tr '\n' ' ')" != "$(echo $want | tr ' ' '\n' | sort | tr '\n' ' ')" ]; then
        bad "$name" "files: $files; expected $want"
    else
        check "$name-parent" fork_threads "$tmp/$name/p.$parent.hpf" parent
        check "$name-child-api" fork_threads "$tmp/$name/p.$dump.hpf.1" dump "$parent"
        check "$name-child-api-2" fork_threads "$tmp/$name/p.$dump.hpf.2" dump "$parent"
        check "$name-child-exit" fork_threads "$tmp/$name/p.$dump.hpf" dump-exit "$parent"
        check "$name-child-forks" fork_threads "$tmp/$name/p.$forker.hpf" fork "$parent"
        check "$name-grandchild" fork_threads "$tmp/$name/p.$grand.hpf" grandchild "$forker"
    fi
fi

# quick_exit: the profile is written after the program's at_quick_exit handlers; status kept.
gcc -O1 -g -o "$out/gcc/quick_exit" test/profiling/quick_exit.c
name=quick-exit
rm -rf "$tmp/$name"; mkdir -p "$tmp/$name"
HEAPPROF_OPTIONS="output=$tmp/$name/p.%p.hpf" LD_PRELOAD="$shim" "$out/gcc/quick_exit" 2>"$tmp/$name.err"
st=$?
if [ $st -ne 3 ] || ! grep -q "handler ran" "$tmp/$name.err"; then
    bad "$name" "status $st, expected 3: $(head -c 300 "$tmp/$name.err")"
elif [ "$(ls "$tmp/$name" | wc -l)" -ne 1 ]; then
    bad "$name" "files: $(ls "$tmp/$name" | tr '\n' ' ')"
else
    check "$name" quick_exit "$(ls "$tmp/$name"/p.*.hpf | head -1)"
fi

# A child that gives up root (or moves into another root) before it allocates and ends: its
# profile is made before the change, in a directory only root may write to.
gcc -O1 -g -fno-omit-frame-pointer -o "$out/gcc/drop_privs" test/profiling/drop_privs.c
if [ "$(id -u)" != 0 ]; then
    echo "skip drop-privs: needs root"
else
    for mode in exit exec evict chroot; do
        name=drop-privs-$mode
        opts=""
        [ $mode = evict ] && opts="hib_table_size=16:hib_table_ways=2"
        mkdir -p "$tmp/empty-root"
        if run "$name" "$opts" "$out/gcc/drop_privs" $mode "$tmp/empty-root"; then
            child=$(sed -n 's/^child \([0-9]*\) status 0$/\1/p' "$tmp/$name.out")
            if [ -z "$child" ] && grep -q "Operation not permitted" "$tmp/$name.err"; then
                echo "skip $name: this root may not change its ids or root (a container without CAP_SETUID?)"
            elif [ -z "$child" ]; then
                bad "$name" "the child failed: $(head -c 300 "$tmp/$name.out" "$tmp/$name.err" | tr '\n' ' ')"
            elif [ "$(ls "$tmp/$name" | wc -l)" -ne 2 ]; then
                bad "$name" "files: $(ls "$tmp/$name" | tr '\n' ' '), expected the parent's and the child's"
            else
                check "$name" "drop_privs_$mode" "$tmp/$name/p.$child.hpf"
            fi
        fi
    done
fi

# Forks while other threads evict HIB records into the spool: no deadlock (timeout -k: a hung
# shim would not even end on SIGTERM). Every child's profile starts with the records the
# parent had spooled, and every interval dump with the spool so far: both read the spool back,
# and both must hold as many records as their END counts.
gcc -O1 -g -fno-omit-frame-pointer -pthread -o "$out/gcc/fork_evict" test/profiling/fork_evict.c
name=fork-evict
rm -rf "$tmp/$name"; mkdir -p "$tmp/$name"
timeout -k 5 120 env HEAPPROF_OPTIONS="output=$tmp/$name/p.%p.hpf:hib_table_size=16:hib_table_ways=2:dump_interval_ms=200" \
    LD_PRELOAD="$shim" "$out/gcc/fork_evict" 200 >"$tmp/$name.out" 2>"$tmp/$name.err"
st=$?
if [ $st != 0 ] || [ "$(cat "$tmp/$name.out")" != done ]; then
    bad "$name" "exit status $st (124/137: it hung), $(head -c 300 "$tmp/$name.err")"
elif [ "$(ls "$tmp/$name" | grep -c 'hpf$')" -ne 201 ] || [ "$(dumps_in "$tmp/$name")" -eq 0 ]; then
    bad "$name" "$(ls "$tmp/$name" | grep -c 'hpf$') exit profiles (expected 201) and $(dumps_in "$tmp/$name") interval dumps"
else
    nok=0
    for f in "$tmp/$name"/p.*; do
        "$report" --format json -o "$tmp/r.json" "$f" 2>"$tmp/r.err" || { nok=1; bad "$name" "$(head -c 300 "$tmp/r.err")"; break; }
    done
    [ $nok = 0 ] && ok "$name"
fi

# The spool's records copied into an API dump and into forked children's profiles: by the
# kernel (copy_file_range), and by reads and writes under a seccomp filter the shim did not see
# installed (filtered: it kills the process on copy_file_range). Every profile holds all
# 32,768 blocks.
gcc -O1 -g -fno-omit-frame-pointer -pthread -Iinclude -o "$out/gcc/spool_copy" test/profiling/spool_copy.c
for mode in plain filtered; do
    name=spool-copy-$mode
    rm -rf "$tmp/$name"; mkdir -p "$tmp/$name"
    timeout -k 5 120 env HEAPPROF_OPTIONS="output=$tmp/$name/p.%p.hpf:hib_table_size=16:hib_table_ways=2" \
        LD_PRELOAD="$shim" "$out/gcc/spool_copy" $mode >"$tmp/$name.out" 2>"$tmp/$name.err"
    st=$?
    if [ $st = 3 ]; then
        echo "skip $name: seccomp filters cannot be installed here ($(head -c 200 "$tmp/$name.err"))"
        continue
    elif [ $st != 0 ] || [ "$(cat "$tmp/$name.out")" != done ]; then
        bad "$name" "exit status $st, $(head -c 300 "$tmp/$name.err")"
        continue
    fi
    files=$(ls "$tmp/$name" | grep -c 'hpf$')
    if [ "$files" -ne 3 ] || [ "$(dumps_in "$tmp/$name")" -ne 1 ]; then
        bad "$name" "files: $(ls "$tmp/$name" | tr '\n' ' '), expected three profiles and one dump"
        continue
    fi
    parent=$(ls "$tmp/$name" | sed -n 's/^p\.\([0-9]*\)\.hpf\.1$/\1/p')
    check "$name-api" spool_copy "$tmp/$name/p.$parent.hpf.1" api
    check "$name-exit" spool_copy "$tmp/$name/p.$parent.hpf" exit
    k=0
    for f in "$tmp/$name"/p.*.hpf; do
        [ "$f" = "$tmp/$name/p.$parent.hpf" ] && continue
        k=$((k + 1))
        check "$name-child$k" spool_copy "$f" exit
    done
done

# A program started under a seccomp filter it inherited (installed before exec, unseen by the
# shim) that kills on mincore and copy_file_range: the shim reads the filter from
# /proc/self/status and keeps away from both (they killed every such process at its exit
# dump). With libunwind, which calls mincore, the cfi walk takes over.
gcc -O1 -g -fno-omit-frame-pointer -pthread -o "$out/gcc/filtered" test/profiling/filtered.c
for unw in cfi fp libunwind; do
    name=filtered-$unw
    rm -rf "$tmp/$name"; mkdir -p "$tmp/$name"
    timeout -k 5 120 env HEAPPROF_OPTIONS="output=$tmp/$name/p.%p.hpf:unwinder=$unw" LD_PRELOAD="$shim" \
        "$out/gcc/filtered" >"$tmp/$name.out" 2>"$tmp/$name.err"
    st=$?
    if [ $st = 3 ]; then
        echo "skip $name: seccomp filters cannot be installed here ($(head -c 200 "$tmp/$name.err"))"
    elif [ $st != 0 ] || [ "$(cat "$tmp/$name.out")" != done ]; then
        bad "$name" "exit status $st ($(kill -l $((st - 128)) 2>/dev/null)), $(head -c 300 "$tmp/$name.err")"
    elif [ "$(ls "$tmp/$name" | wc -l)" -ne 1 ]; then
        bad "$name" "files: $(ls "$tmp/$name" | tr '\n' ' '), expected one profile"
    else
        check "$name" filtered "$tmp/$name"/p.*.hpf
    fi
done

# A worker that puts itself under a seccomp filter that kills on system calls it does not list
# and refuses every open (man-db's and OpenSSH's sandboxes): the shim must neither get it killed
# (reading /proc, mincore, a new profile file) nor lose what it allocated after the filter. The
# profile is made before the filter and the exit profile written into it; evict fills it with
# evicted records under the filter. Every unwinder: libunwind gives way to the cfi walk. tsync
# filters every thread, the interval-dump thread too, which must stop rather than sleep again
# (its sleep is not in the list: it was killed at its next tick).
gcc -O1 -g -fno-omit-frame-pointer -pthread -o "$out/gcc/sandbox" test/profiling/sandbox.c
for mode in prctl syscall tsync evict; do
    for unw in cfi fp libunwind; do
        name=sandbox-$mode-$unw
        opts="unwinder=$unw"
        [ $mode = evict ] && opts="$opts:hib_table_size=16:hib_table_ways=2"
        [ $mode = tsync ] && opts="$opts:dump_interval_ms=1"
        rm -rf "$tmp/$name"; mkdir -p "$tmp/$name"
        timeout -k 5 120 env HEAPPROF_OPTIONS="output=$tmp/$name/p.%p.hpf:$opts" LD_PRELOAD="$shim" \
            "$out/gcc/sandbox" $mode >"$tmp/$name.out" 2>"$tmp/$name.err"
        st=$?
        if [ $st = 3 ] || [ $st = 4 ]; then
            echo "skip $name: seccomp filters cannot be installed here ($(head -c 200 "$tmp/$name.err"))"
        elif [ $st != 0 ] || [ "$(cat "$tmp/$name.out")" != done ]; then
            bad "$name" "exit status $st ($(kill -l $((st - 128)) 2>/dev/null)), output '$(head -c 200 "$tmp/$name.out")', $(head -c 300 "$tmp/$name.err")"
        elif [ "$(ls "$tmp/$name" | wc -l)" -ne 1 ]; then
            bad "$name" "files: $(ls "$tmp/$name" | tr '\n' ' '), expected one profile"
        else
            check "$name" "sandbox_$mode" "$tmp/$name"/p.*.hpf
        fi
    done
done

# A program that closes stderr and opens a file of its own as descriptor 2: the shim's
# messages stay out of a data file, and go into a log (opened for appending).
gcc -O1 -g -o "$out/gcc/stderr_reuse" test/profiling/stderr_reuse.c
for mode in data log; do
    name=stderr-reuse-$mode
    if run "$name" "verbosity=2" "$out/gcc/stderr_reuse" $mode "$tmp/$name.file"; then
        got=$(cat "$tmp/$name.file")
        case $mode in
        data) want=DATA ;;
        log) want="DATAheapprof: profile written to $tmp/$name/p.*.hpf" ;;
        esac
        # shellcheck disable=SC2254
        case $got in
        $want) [ "$(ls "$tmp/$name" | wc -l)" -eq 1 ] && ok "$name" || bad "$name" "no profile" ;;
        *) bad "$name" "the file holds '$(echo "$got" | head -c 200)'" ;;
        esac
    fi
done

# Programs built with sanitizers. gcc's runtimes are shared libraries: heapprof-run preloads
# the runtime first; clang links its own into the program. Either way the shim patches the
# sanitizer's allocator; status and output as bare, exact counts.
for cs in gcc:address gcc:thread gcc:leak clang:address clang:thread clang:memory clang:leak; do
    cc=${cs%%:*} san=${cs#*:}
    name=sanitized-$cc-$san
    if ! $cc -O1 -g -fsanitize=$san -pthread -o "$out/$cc/sanitized-$san" test/profiling/sanitized.c 2>"$tmp/$name.build"; then
        bad "$name" "build: $(head -c 200 "$tmp/$name.build")"
        continue
    fi
    rm -rf "$tmp/$name"; mkdir -p "$tmp/$name"
    # halt_on_error: a report ends the run with an error status instead of going on.
    TSAN_OPTIONS=halt_on_error=1 timeout -k 5 120 "$top/scripts/heapprof-run" -q -o "$tmp/$name/p.%p.hpf" -- \
        "$out/$cc/sanitized-$san" >"$tmp/$name.out" 2>"$tmp/$name.err"
    st=$?
    if [ $st -ne 0 ]; then
        bad "$name" "exit status $st ($(head -c 300 "$tmp/$name.err"))"
    elif grep -q "Sanitizer" "$tmp/$name.err"; then
        bad "$name" "sanitizer report: $(grep -m1 -A3 "Sanitizer" "$tmp/$name.err" | tr '\n' ' ' | head -c 300)"
    else
        check "$name" sanitized "$(ls "$tmp/$name"/p.*.hpf | head -1)"
    fi
done

# An output directory that does not exist is reported when the program starts, not only at
# exit, in one line; the program runs as bare.
name=output-dir-missing
HEAPPROF_OPTIONS="output=$tmp/no-such-dir/p.%p.hpf" LD_PRELOAD="$shim" "$out/gcc/quick_exit" >/dev/null 2>"$tmp/$name.err"
st=$?
case $(grep '^heapprof:' "$tmp/$name.err") in
"heapprof: profiles cannot be written: $tmp/no-such-dir does not exist (output=$tmp/no-such-dir/p.%p.hpf)")
    [ $st -eq 3 ] && ok "$name" || bad "$name" "status $st, expected 3" ;;
*) bad "$name" "expected one line from heapprof: $(head -c 300 "$tmp/$name.err")" ;;
esac
# The same with interval dumps: still the one line, not one per dump or at exit.
name=output-dir-missing-interval
HEAPPROF_OPTIONS="output=$tmp/no-such-dir/p.%p.hpf:dump_interval_ms=20" LD_PRELOAD="$shim" "$out/gcc/sites" >/dev/null 2>"$tmp/$name.err"
n_all=$(grep -c "^heapprof:" "$tmp/$name.err")
n_start=$(grep -c "profiles cannot be written: $tmp/no-such-dir does not exist" "$tmp/$name.err")
if [ "$n_all" -eq 1 ] && [ "$n_start" -eq 1 ]; then ok "$name"; else bad "$name" "$n_all messages: $(head -c 300 "$tmp/$name.err")"; fi
# A directory that goes away after the start is reported when a dump cannot be made, once for
# the on-demand dumps (interval dumps here) and once at exit.
name=output-dir-removed
mkdir -p "$tmp/$name.d"
gcc -O1 -g -o "$out/gcc/outdir_gone" test/profiling/outdir_gone.c
HEAPPROF_OPTIONS="output=$tmp/$name.d/p.%p.hpf:dump_interval_ms=20" LD_PRELOAD="$shim" "$out/gcc/outdir_gone" "$tmp/$name.d" 2>"$tmp/$name.err"
st=$?
n_od=$(grep -c "cannot create profile .*\.hpf\.[0-9]*: no such directory (later on-demand dumps" "$tmp/$name.err")
n_all=$(grep -c "^heapprof:" "$tmp/$name.err")
if [ $st -eq 0 ] && [ "$n_od" -eq 1 ] && [ "$n_all" -eq 2 ]; then ok "$name"; else bad "$name" "status $st, $n_all messages, $n_od about on-demand dumps: $(head -c 300 "$tmp/$name.err")"; fi

# The shim's messages to a pipe whose reader has gone (`heapprof-run ./app 2>&1 | head`) must
# not end the program with SIGPIPE (status 141 before): its own status stays.
gcc -O1 -g -o "$out/gcc/quiet_exit" test/profiling/quiet_exit.c
for how in heapprof-run verbosity=2; do
    name=message-to-broken-pipe-$how
    rm -rf "$tmp/$name"; mkdir -p "$tmp/$name"
    if [ $how = heapprof-run ]; then
        { sleep 1; "$top/scripts/heapprof-run" -o "$tmp/$name/p.%p.hpf" "$out/gcc/quiet_exit" 2>&1; echo $? >"$tmp/$name.st"; } | true
    else
        { sleep 1; HEAPPROF_OPTIONS="output=$tmp/$name/p.%p.hpf:verbosity=2" LD_PRELOAD="$shim" "$out/gcc/quiet_exit" 2>&1; echo $? >"$tmp/$name.st"; } | true
    fi
    st=$(cat "$tmp/$name.st")
    files=$(ls "$tmp/$name")
    case $st/$files in
    5/p.*.hpf)
        if "$report" -f json -o "$tmp/$name.json" "$tmp/$name/$files" 2>"$tmp/$name.rerr" &&
            grep -q '"alloc_count": 4' "$tmp/$name.json"; then ok "$name"
        else bad "$name" "profile: $(head -c 200 "$tmp/$name.rerr")"; fi ;;
    *) bad "$name" "status $st, expected 5; profiles: $(echo $files)" ;;
    esac
done

# A profile that cannot be written whole (a file size limit here; a full disk the same) is
# said in one line and removed, not left for the reader to reject; the program's status stays.
name=write-fails
rm -rf "$tmp/$name"; mkdir -p "$tmp/$name"
(ulimit -f 1 && HEAPPROF_OPTIONS="output=$tmp/$name/p.%p.hpf" LD_PRELOAD="$shim" "$out/gcc/quick_exit" \
    >/dev/null 2>"$tmp/$name.err")
st=$?
case $(grep '^heapprof:' "$tmp/$name.err") in
"heapprof: writing profile $tmp/$name/p."*".hpf: file too large for the file system or RLIMIT_FSIZE; the incomplete file was removed")
    if [ $st -ne 3 ]; then bad "$name" "status $st, expected 3"
    elif [ -n "$(ls "$tmp/$name")" ]; then bad "$name" "left: $(ls "$tmp/$name")"
    else ok "$name"; fi ;;
*) bad "$name" "status $st, expected one line from heapprof: $(head -c 300 "$tmp/$name.err")" ;;
esac
# The same while the program runs: evicted records go to the file as they come.
name=write-fails-evicting
rm -rf "$tmp/$name"; mkdir -p "$tmp/$name"
(ulimit -f 2 && HEAPPROF_OPTIONS="output=$tmp/$name/p.%p.hpf:hib_table_size=16:hib_table_ways=2:stack_depth=256" \
    LD_PRELOAD="$shim" "$out/gcc/evict" "$tmp/$name.own" >"$tmp/$name.out" 2>"$tmp/$name.err")
st=$?
if [ $st -ne 0 ] || ! grep -q 'evict done' "$tmp/$name.out"; then
    bad "$name" "status $st: $(cat "$tmp/$name.out" "$tmp/$name.err" | head -c 300)"
elif [ -n "$(ls "$tmp/$name")" ] || [ "$(grep -c '^heapprof:' "$tmp/$name.err")" -ne 1 ]; then
    bad "$name" "left: $(ls "$tmp/$name"); $(head -c 300 "$tmp/$name.err")"
else
    ok "$name"
fi

# A program that uses every descriptor its soft limit allows gets as many under the shim as
# bare (the shim keeps none open), and its exit profile is still made, whole (the memory map
# read too: its frames have names): each of the shim's opens gets a descriptor above the soft
# limit, raised towards the hard one for that open only. With soft = hard there is none: the
# profile is said lost in one line that names the limit.
gcc -O1 -g -o "$out/gcc/fd_exhaust" test/profiling/fd_exhaust.c
for lim in soft hard; do
    name=descriptors-exhausted-$lim
    rm -rf "$tmp/$name"; mkdir -p "$tmp/$name"
    if [ $lim = soft ]; then set_lim="ulimit -S -n 20"; else set_lim="ulimit -n 20"; fi
    bare_n=$(eval "$set_lim" && "$out/gcc/fd_exhaust")
    shim_n=$(eval "$set_lim" && HEAPPROF_OPTIONS="output=$tmp/$name/p.%p.hpf" LD_PRELOAD="$shim" "$out/gcc/fd_exhaust" 2>"$tmp/$name.err")
    said=$(grep '^heapprof:' "$tmp/$name.err")
    if [ -z "$bare_n" ] || [ "$bare_n" != "$shim_n" ]; then
        bad "$name" "bare opened $bare_n, under the shim $shim_n"
    elif [ $lim = soft ]; then
        f=$(ls "$tmp/$name"/p.*.hpf 2>/dev/null | head -1)
        if [ -n "$said" ] || [ -z "$f" ]; then bad "$name" "no profile: $said"
        elif "$report" -f json -o "$tmp/$name.json" "$f" 2>"$tmp/$name.rerr" && grep -q '"function": "main"' "$tmp/$name.json"; then ok "$name"
        else bad "$name" "profile: $(head -c 200 "$tmp/$name.rerr")"; fi
    else
        case $said in
        "heapprof: cannot create profile $tmp/$name/p."*".hpf: no free file descriptor (RLIMIT_NOFILE)") ok "$name" ;;
        *) bad "$name" "expected one line from heapprof: $(head -c 300 "$tmp/$name.err")" ;;
        esac
    fi
done

# Tables that fit: at the smallest metadata budget (16 MiB) the default max_contexts and
# hib_table_size do not (19 MiB of tables): they are made smaller, said in one line, and the
# profile is exact (profiling was off before). Under an address-space limit (ulimit -v) the
# tables take at most a sixteenth of it (78 MiB: 262144 contexts), said only with verbosity=2.
name=budget-minimum
rm -rf "$tmp/$name"; mkdir -p "$tmp/$name"
HEAPPROF_OPTIONS="output=$tmp/$name/p.%p.hpf:dump_signal=12:metadata_budget_mb=16" LD_PRELOAD="$shim" \
    "$out/gcc/sites" signal >/dev/null 2>"$tmp/$name.err"
st=$?
case $(grep '^heapprof:' "$tmp/$name.err") in
"heapprof: tables for 262144 contexts and 16384 HIB table entries (max_contexts=1048576, hib_table_size=65536) to fit metadata_budget_mb of 16 MiB")
    [ $st -eq 0 ] && check "$name" exit "$(ls "$tmp/$name"/p.*.hpf | head -1)" || bad "$name" "status $st" ;;
*) bad "$name" "status $st, expected one line from heapprof: $(head -c 300 "$tmp/$name.err")" ;;
esac
for verbosity in 1 2; do
    name=address-space-limit-v$verbosity
    rm -rf "$tmp/$name"; mkdir -p "$tmp/$name"
    (ulimit -v 80000 && HEAPPROF_OPTIONS="output=$tmp/$name/p.%p.hpf:dump_signal=12:verbosity=$verbosity" \
        LD_PRELOAD="$shim" "$out/gcc/sites" signal >/dev/null 2>"$tmp/$name.err")
    st=$?
    said=$(grep -c "^heapprof: tables for 262144 contexts and 16384 HIB table entries .* to fit the address-space limit (ulimit -v) of 78 MiB$" "$tmp/$name.err")
    if [ $st -ne 0 ]; then
        bad "$name" "status $st: $(head -c 300 "$tmp/$name.err")"
    elif [ "$said" -ne $((verbosity - 1)) ]; then
        bad "$name" "said $said times at verbosity $verbosity: $(head -c 300 "$tmp/$name.err")"
    else
        check "$name" exit "$(ls "$tmp/$name"/p.*.hpf | head -1)"
    fi
done

# dump_peak_growth: a process killed with SIGKILL (no exit profile) leaves <output>.peak, the
# profile of its biggest heap; no temporary file stays behind.
gcc -O1 -g -o "$out/gcc/peak_kill" test/profiling/peak_kill.c
name=peak-kill
rm -rf "$tmp/$name"; mkdir -p "$tmp/$name"
HEAPPROF_OPTIONS="output=$tmp/$name/p.%p.hpf:dump_peak_growth=50" LD_PRELOAD="$shim" "$out/gcc/peak_kill" 2>"$tmp/$name.err"
st=$?
files=$(ls "$tmp/$name")
case $files in
p.*.hpf.peak) [ $st -eq 137 ] && check "$name" peak_kill "$tmp/$name/$files" || bad "$name" "status $st, expected 137" ;;
*) bad "$name" "files: $(echo $files), expected one p.PID.hpf.peak; $(head -c 200 "$tmp/$name.err")" ;;
esac

# jemalloc under the _rjem_ prefix (Rust's jemallocator), made from Debian's static libjemalloc
# by renaming its public symbols: patch_prefixed=1 profiles its allocations exactly (served by
# the shim's backend); without it they are missing, and heapprof-run says so.
name=prefixed-jemalloc
jem=/usr/lib/x86_64-linux-gnu/libjemalloc_pic.a
if nm -g --defined-only "$jem" 2>/dev/null | awk 'NF == 3 && ($2 == "T" || $2 == "W") && $3 !~ /^je_/ {print $3 " _rjem_" $3}' |
    sort -u >"$tmp/rjem.syms" && [ -s "$tmp/rjem.syms" ] &&
    objcopy --redefine-syms="$tmp/rjem.syms" "$jem" "$tmp/librjem.a" &&
    gcc -O1 -g -o "$out/gcc/rjem" test/profiling/rjem.c "$tmp/librjem.a" -lpthread -ldl -lm -lstdc++ 2>"$tmp/$name.build" &&
    gcc -O1 -g -no-pie -o "$out/gcc/rjem-nopie" test/profiling/rjem.c "$tmp/librjem.a" -lpthread -ldl -lm -lstdc++ 2>>"$tmp/$name.build"; then
    for v in "" -nopie; do
        n=prefixed-jemalloc$v
        if run "$n" "patch_prefixed=1" "$out/gcc/rjem$v"; then
            check "$n" rjem "$(ls "$tmp/$n"/p.*.hpf | head -1)"
        fi
    done
    if run prefixed-jemalloc-off "" "$out/gcc/rjem"; then
        check prefixed-jemalloc-off rjem_off "$(ls "$tmp/prefixed-jemalloc-off"/p.*.hpf | head -1)"
    fi
else
    bad "$name" "cannot build a prefixed jemalloc from $jem: $(head -c 200 "$tmp/$name.build")"
fi

# heapprof-run warns about an allocator linked in under names of its own (Rust's
# jemallocator: _rjem_*), whose allocations the profile cannot show; not about others.
gcc -O1 -g -o "$out/gcc/prefixed_alloc" test/profiling/prefixed_alloc.c
name=heapprof-run-prefixed-allocator
rm -rf "$tmp/$name"; mkdir -p "$tmp/$name"
"$top/scripts/heapprof-run" -q -o "$tmp/$name/p.%p.hpf" -- "$out/gcc/prefixed_alloc" 2>"$tmp/$name.err"
st=$?
"$top/scripts/heapprof-run" -q -o "$tmp/$name/q.%p.hpf" -- "$out/gcc/quick_exit" 2>"$tmp/$name.err2"
if [ $st -ne 0 ] || ! grep -q "heapprof-run: warning: .*_rjem_ prefix" "$tmp/$name.err"; then
    bad "$name" "status $st: $(head -c 300 "$tmp/$name.err")"
elif grep -q "heapprof-run: warning" "$tmp/$name.err2"; then
    bad "$name" "warned about a program without such an allocator: $(head -c 300 "$tmp/$name.err2")"
else
    ok "$name"
fi

# A sanitizer runtime the user preloads (an uninstrumented program with an ASan-built
# library needs LD_PRELOAD=libasan.so.8 even bare) stays in front of the shim.
name=sanitized-user-preload
mkdir -p "$out/gcc/asan_lib"
if gcc -O1 -g -fsanitize=address -shared -fPIC -o "$out/gcc/asan_lib/libasanlib.so" test/profiling/asan_lib.c 2>"$tmp/$name.build" &&
    gcc -O1 -g -DMAIN -o "$out/gcc/asan_lib/main" test/profiling/asan_lib.c -L"$out/gcc/asan_lib" -lasanlib \
        -Wl,-rpath,"$out/gcc/asan_lib" 2>>"$tmp/$name.build"; then
    asan=$(ldd "$out/gcc/asan_lib/main" | awk '$1 ~ /^libasan\.so/ {print $1; exit}')
    rm -rf "$tmp/$name"; mkdir -p "$tmp/$name"
    LD_PRELOAD="$asan" "$top/scripts/heapprof-run" -q -o "$tmp/$name/p.%p.hpf" -- "$out/gcc/asan_lib/main" 2>"$tmp/$name.err"
    st=$?
    if [ $st -ne 0 ]; then
        bad "$name" "exit status $st ($(head -c 300 "$tmp/$name.err"))"
    else
        check "$name" asan_lib "$(ls "$tmp/$name"/p.*.hpf | head -1)"
    fi
else
    bad "$name" "build: $(head -c 200 "$tmp/$name.build")"
fi

# heapprof-run --backend: the allocator is preloaded after the shim and is its backend, and the
# report names its library.
for be in jemalloc tcmalloc mimalloc; do
    name=heapprof-run-backend-$be
    rm -rf "$tmp/$name"; mkdir -p "$tmp/$name"
    if "$top/scripts/heapprof-run" -q -o "$tmp/$name/p.%p.hpf" --backend $be -- "$out/gcc/sites" >/dev/null 2>"$tmp/$name.err"; then
        f=$(ls "$tmp/$name"/p.*.hpf | head -1)
        if "$report" "$f" 2>/dev/null | grep -q "backend *next (/.*/lib$be[_a-z]*\.so\.[0-9]*), "; then
            check "$name" exit "$f"
        else
            bad "$name" "backend line: $("$report" "$f" 2>&1 | grep backend)"
        fi
    else
        bad "$name" "exit status $?: $(head -c 300 "$tmp/$name.err")"
    fi
done

# Aligned allocations on every backend: every pointer aligned as asked (Debian's mimalloc 2.0
# breaks that for some sizes on its own: the shim then aligns within a plain block), every
# allocation counted.
gcc -O2 -g -o "$out/gcc/align_check" test/profiling/align_check.c || bad build-gcc align_check.c
for be in next glibc jemalloc tcmalloc mimalloc; do
    name=aligned-backend-$be
    rm -rf "$tmp/$name"; mkdir -p "$tmp/$name"
    if "$top/scripts/heapprof-run" -q -o "$tmp/$name/p.%p.hpf" --backend $be -- "$out/gcc/align_check" >"$tmp/$name.out" 2>"$tmp/$name.err"; then
        check "$name" align "$(ls "$tmp/$name"/p.*.hpf | head -1)"
    else
        bad "$name" "exit status $?: $(head -c 300 "$tmp/$name.out") $(head -c 300 "$tmp/$name.err")"
    fi
done

# An alignment that is not a power of two is the allocator's to take or refuse: with the shim
# in front, each backend answers as it does alone. The shim asks the backend only when the
# program passes such an alignment: a debugging allocator that aborts on one (gperftools'
# tcmalloc_minimal_debug) runs a program that never does to its end.
gcc -O1 -o "$out/gcc/odd_align" test/profiling/odd_align.c || bad build-gcc odd_align.c
for lib in "" /usr/lib/x86_64-linux-gnu/libjemalloc.so.2 /usr/lib/x86_64-linux-gnu/libtcmalloc_minimal.so.4 \
    /usr/lib/x86_64-linux-gnu/libmimalloc.so.2; do
    name=odd-align-${lib:+$(basename "$lib" | sed 's/\.so.*//')}
    [ -n "$lib" ] || name=odd-align-glibc
    alone=$(LD_PRELOAD="$lib" "$out/gcc/odd_align" 2>&1)
    under=$(HEAPPROF_OPTIONS=output= LD_PRELOAD="$shim${lib:+ $lib}" "$out/gcc/odd_align" 2>&1)
    if [ -n "$alone" ] && [ "$alone" = "$under" ]; then ok "$name"; else bad "$name" "alone: $alone; under the shim: $under"; fi
done
name=backend-tcmalloc-debug
run_after=/usr/lib/x86_64-linux-gnu/libtcmalloc_minimal_debug.so.4
if run "$name" "" "$out/gcc/sites"; then
    check "$name" exit "$(ls "$tmp/$name"/p.*.hpf | head -1)"
fi
run_after=

# glibc's malloc debugging library preloaded before the shim defines malloc and friends as
# hidden symbols of glibc's version (malloc@GLIBC_2.2.5): programs reach them, dlsym does not.
# With MALLOC_CHECK_ it serves the blocks itself: the shim must see it in front and patch it
# (before, the profile came out empty; a non-PIE program that takes malloc's address, whose
# PLT entry stands for malloc, must have the library patched, not that entry). Without it, it hands every call to __libc_malloc,
# which is the shim's: every block is there, and the library's wrapper frame is left off the
# top of each stack (it was on every one: every site checked exactly). After the shim it is
# passed by (the shim's backend is glibc's malloc).
mdebug=/usr/lib/x86_64-linux-gnu/libc_malloc_debug.so.0
for order in before after; do
    for check_env in MALLOC_CHECK_=3 MALLOC_TRACE=/dev/null; do
        name=malloc-debug-$order-${check_env%%=*}
        if [ $order = before ]; then pre="$mdebug $shim"; else pre="$shim $mdebug"; fi
        rm -rf "$tmp/$name"; mkdir -p "$tmp/$name"
        if env "$check_env" HEAPPROF_OPTIONS="output=$tmp/$name/p.%p.hpf" LD_PRELOAD="$pre" \
            "$out/gcc/sites" >"$tmp/$name.out" 2>"$tmp/$name.err"; then
            check "$name" exit "$(ls "$tmp/$name"/p.*.hpf | head -1)"
            if [ $order = after ]; then
                # One line says the library's checks see nothing there.
                if [ "$(wc -l <"$tmp/$name.err")" -eq 1 ] &&
                    grep -q "^heapprof: $mdebug comes after the shim in LD_PRELOAD: .* preload it before the shim$" "$tmp/$name.err"; then
                    ok "$name-warns"
                else
                    bad "$name-warns" "$(head -c 300 "$tmp/$name.err")"
                fi
            elif grep -q . "$tmp/$name.err"; then bad "$name-quiet" "$(head -c 300 "$tmp/$name.err")"; else ok "$name-quiet"; fi
        else
            bad "$name" "exit status $?: $(head -c 300 "$tmp/$name.err")"
        fi
    done
done
# heapprof-run puts it in front of the shim, where it works, whatever the user's LD_PRELOAD
# order (it keeps the rest of that order after the shim).
name=malloc-debug-heapprof-run
rm -rf "$tmp/$name"; mkdir -p "$tmp/$name"
if MALLOC_CHECK_=3 LD_PRELOAD="$mdebug" "$top/scripts/heapprof-run" -q -o "$tmp/$name/p.%p.hpf" "$out/gcc/sites" \
    >/dev/null 2>"$tmp/$name.err"; then
    f=$(ls "$tmp/$name"/p.*.hpf | head -1)
    if "$report" "$f" 2>/dev/null | grep -q "backend *patched" && ! grep -q . "$tmp/$name.err"; then
        check "$name" exit "$f"
    else
        bad "$name" "backend: $("$report" "$f" 2>&1 | grep backend); stderr: $(head -c 200 "$tmp/$name.err")"
    fi
else
    bad "$name" "exit status $?: $(head -c 300 "$tmp/$name.err")"
fi
# python3 is a non-PIE program that takes malloc's address (its PLT entry is malloc's address).
name=malloc-debug-before-python3
rm -rf "$tmp/$name"; mkdir -p "$tmp/$name"
if MALLOC_CHECK_=3 PYTHONMALLOC=malloc HEAPPROF_OPTIONS="output=$tmp/$name/p.%p.hpf" LD_PRELOAD="$mdebug $shim" \
    /usr/bin/python3 -c 'import sys; x = [str(i) * 3 for i in range(100000)]; sys.exit(0 if len(x) == 100000 else 1)' \
    2>"$tmp/$name.err" && "$report" -f json -o "$tmp/$name.json" "$tmp/$name"/p.*.hpf 2>>"$tmp/$name.err"; then
    if python3 -c 'import json, sys; s = json.load(open(sys.argv[1]))["summary"]
sys.exit(0 if s["total_allocs"] >= 100000 and s["foreign_frees"] == 0 and s["double_frees"] == 0 else 1)' "$tmp/$name.json"; then
        ok "$name"
    else
        bad "$name" "summary: $(python3 -c 'import json, sys; print(json.load(open(sys.argv[1]))["summary"])' "$tmp/$name.json" | head -c 300)"
    fi
else
    bad "$name" "$(head -c 300 "$tmp/$name.err")"
fi

# heapprof-run: default file name, -o with %p, message on stderr, exit status kept.
name=heapprof-run
(cd "$tmp" && "$top/scripts/heapprof-run" "$out/gcc/sites" >/dev/null 2>"$tmp/run.err")
rc=$?
if [ $rc -eq 0 ] && ls "$tmp"/heapprof.sites.*.hpf >/dev/null 2>&1 && grep -q "profile written to $tmp/heapprof.sites" "$tmp/run.err"; then
    ok "$name"
else
    bad "$name" "rc=$rc, files: $(ls "$tmp" | tr '\n' ' '), stderr: $(head -c 200 "$tmp/run.err")"
fi
# Where profiles went is said on heapprof-run's stderr, never on the programs' own: a program's
# stderr read by another (here a pipe into a file) holds only what the program wrote. A process
# that reused descriptor 9 (which carries the notes) for a file of its own keeps that file clean.
name=heapprof-run-notes
"$top/scripts/heapprof-run" -o "$tmp/notes.%p.hpf" sh -c \
    "{ echo own >&2; \"$out/gcc/sites\" >/dev/null; } 2>&1 | cat >\"$tmp/notes.pipe\"; exec 9>\"$tmp/notes.nine\"; printf DATA >&9; \"$out/gcc/sites\" >/dev/null" \
    >/dev/null 2>"$tmp/notes.err"
rc=$?
nprof=$(ls "$tmp"/notes.*.hpf 2>/dev/null | wc -l)
nnotes=$(grep -c "profile written to $tmp/notes\." "$tmp/notes.err")
if [ $rc -ne 0 ]; then
    bad "$name" "exit status $rc: $(head -c 300 "$tmp/notes.err")"
elif [ "$(cat "$tmp/notes.pipe")" != own ]; then
    bad "$name" "the program's stderr holds '$(head -c 300 "$tmp/notes.pipe")', not just 'own'"
elif [ "$(cat "$tmp/notes.nine")" != DATA ]; then
    bad "$name" "the file the program opened as descriptor 9 holds '$(head -c 300 "$tmp/notes.nine")'"
elif [ "$nprof" -lt 4 ] || [ "$nnotes" -lt 3 ]; then
    # sh, cat and the piped sites say where their profiles went; the last sites has descriptor
    # 9 as its own file, so its profile is written but not announced.
    bad "$name" "$nprof profiles, $nnotes notes: $(head -c 300 "$tmp/notes.err")"
else
    ok "$name"
fi
# Warnings and errors too go to heapprof-run's stderr, not into the program's (a process whose
# stderr is a file of its own printed "unknown option" there). The command sets an option of
# its own for its child, which heapprof-run cannot check beforehand.
name=heapprof-run-warnings
"$top/scripts/heapprof-run" -o "$tmp/warn.%p.hpf" sh -c \
    "HEAPPROF_OPTIONS=\"\$HEAPPROF_OPTIONS:bogus_option=1\" \"$out/gcc/sites\" >/dev/null 2>\"$tmp/warn.prog\"" \
    >/dev/null 2>"$tmp/warn.err"
rc=$?
nwarn=$(grep -c "unknown option 'bogus_option'" "$tmp/warn.err")
if [ $rc -ne 0 ]; then
    bad "$name" "exit status $rc: $(head -c 300 "$tmp/warn.err")"
elif [ -s "$tmp/warn.prog" ]; then
    bad "$name" "the program's stderr holds '$(head -c 300 "$tmp/warn.prog")'"
elif [ "$nwarn" -ne 1 ]; then
    bad "$name" "$nwarn warnings on heapprof-run's stderr, expected 1 (sites)"
else
    ok "$name"
fi
# Options heapprof-run is given (or finds in HEAPPROF_OPTIONS) are checked once, before the
# command runs: wrong ones are said once, not by every process, and nothing runs.
name=heapprof-run-bad-options
HEAPPROF_OPTIONS=unwinder=foo "$top/scripts/heapprof-run" -o "$tmp/badopt.%p.hpf" \
    --options stack_depth=1000:bogus_option=1 sh -c "touch \"$tmp/badopt.ran\"; \"$out/gcc/sites\"" \
    >/dev/null 2>"$tmp/badopt.err"
rc=$?
if [ $rc -ne 2 ]; then
    bad "$name" "exit status $rc, expected 2: $(head -c 300 "$tmp/badopt.err")"
elif [ -e "$tmp/badopt.ran" ] || ls "$tmp"/badopt.*.hpf >/dev/null 2>&1; then
    bad "$name" "the command ran (or a profile was written)"
elif [ "$(grep -c "^heapprof: unknown option 'bogus_option' (help=1 lists them)$" "$tmp/badopt.err")" != 1 ] ||
    [ "$(grep -c "^heapprof: option stack_depth=1000 is out of range (1..256): using 256$" "$tmp/badopt.err")" != 1 ] ||
    [ "$(grep -c "^heapprof: unknown unwinder 'foo' (cfi, fp, libunwind); using cfi$" "$tmp/badopt.err")" != 1 ] ||
    ! grep -q "^heapprof-run: sh was not run: correct the options above" "$tmp/badopt.err" ||
    [ "$(wc -l <"$tmp/badopt.err")" != 4 ]; then
    bad "$name" "messages: $(head -c 500 "$tmp/badopt.err")"
else
    ok "$name"
fi
# Option values out of range are said and replaced by the nearest allowed one (an unknown
# unwinder by the default); the profile records what was used.
name=options-out-of-range
HEAPPROF_OPTIONS="output=$tmp/range.%p.hpf:stack_depth=1000:unwinder=foo:dump_signal=99" \
    LD_PRELOAD="$shim" "$out/gcc/sites" >/dev/null 2>"$tmp/range.err"
rc=$?
used=$("$report" --format json "$tmp"/range.*.hpf 2>&1 |
    python3 -c 'import json, sys; p = json.load(sys.stdin)["process"]; print(p["unwinder"], p["stack_depth"])' 2>&1)
if [ $rc -ne 0 ]; then
    bad "$name" "exit status $rc: $(head -c 300 "$tmp/range.err")"
elif ! grep -q "^heapprof: option stack_depth=1000 is out of range (1..256): using 256$" "$tmp/range.err" ||
    ! grep -q "^heapprof: unknown unwinder 'foo' (cfi, fp, libunwind); using cfi$" "$tmp/range.err" ||
    ! grep -q "^heapprof: option dump_signal=99 is not a signal number (1..64): no dump signal$" "$tmp/range.err"; then
    bad "$name" "warnings: $(head -c 400 "$tmp/range.err")"
elif [ "$used" != "cfi 256" ]; then
    bad "$name" "the profile says unwinder and stack_depth: $(echo "$used" | head -c 300)"
else
    ok "$name"
fi
# A descriptor 9 the command inherits from its caller stays the command's; the notes take
# another.
name=heapprof-run-inherited-fd
"$top/scripts/heapprof-run" -o "$tmp/inh.%p.hpf" sh -c "printf MINE >&9; \"$out/gcc/sites\" >/dev/null" \
    >/dev/null 2>"$tmp/inh.err" 9>"$tmp/inh.nine"
rc=$?
if [ $rc -ne 0 ] || [ "$(cat "$tmp/inh.nine")" != MINE ]; then
    bad "$name" "exit status $rc, descriptor 9's file holds '$(head -c 300 "$tmp/inh.nine")'"
elif ! grep -q "profile written to $tmp/inh\." "$tmp/inh.err"; then
    bad "$name" "no notes on heapprof-run's stderr: $(head -c 300 "$tmp/inh.err")"
else
    ok "$name"
fi
if "$top/scripts/heapprof-run" -o "$tmp/x.%p.hpf" python3 -c 'import sys; sys.exit(3)' 2>/dev/null; then rc=0; else rc=$?; fi
if [ $rc -eq 3 ] && ls "$tmp"/x.*.hpf >/dev/null 2>&1; then ok heapprof-run-status; else bad heapprof-run-status "rc=$rc"; fi
# A command that is also a shell builtin is found on PATH like any other.
if "$top/scripts/heapprof-run" -q -o "$tmp/b.%p.hpf" true 2>"$tmp/b.err" && ls "$tmp"/b.*.hpf >/dev/null 2>&1; then
    ok heapprof-run-builtin-name
else
    bad heapprof-run-builtin-name "$(head -c 200 "$tmp/b.err")"
fi

# heapprof-run refuses, with one line saying why, the programs LD_PRELOAD cannot reach (the
# loader would run them unprofiled, or print its own message and run them unprofiled): static
# ones, setuid to another user, with file capabilities, and ELF files of another class or
# machine than the shim. It runs those the preload does reach: a setuid program of the user
# running it. run_refused NAME PATTERN CMD...: exit status 2, PATTERN on stderr, CMD not run.
run_refused() {
    rname=$1 pattern=$2
    shift 2
    rm -f "$tmp/refused.ran"
    "$top/scripts/heapprof-run" -q -o "$tmp/refused.%p.hpf" "$@" >/dev/null 2>"$tmp/refused.err"
    rc=$?
    if [ $rc -ne 2 ] || [ "$(wc -l <"$tmp/refused.err")" -ne 1 ] ||
        ! grep -q "^heapprof-run: .*$pattern" "$tmp/refused.err" ||
        ls "$tmp"/refused.*.hpf >/dev/null 2>&1; then
        bad "$rname" "rc=$rc, stderr: $(head -c 300 "$tmp/refused.err"), profiles: $(ls "$tmp" | grep -c '^refused.*hpf')"
    else
        ok "$rname"
    fi
}
mkdir -p "$tmp/refuse"
if gcc -static -O1 -o "$tmp/refuse/static" test/progs/t_ctor.c 2>"$tmp/refuse/cc.err"; then
    run_refused heapprof-run-refuses-static "is statically linked" "$tmp/refuse/static"
    # A #! script is judged by its interpreter.
    printf '#!%s\n' "$tmp/refuse/static" >"$tmp/refuse/script" && chmod 755 "$tmp/refuse/script"
    run_refused heapprof-run-refuses-static-interpreter "script's interpreter .*/static is statically linked" "$tmp/refuse/script"
else
    bad heapprof-run-refuses-static "cannot link statically: $(head -c 200 "$tmp/refuse/cc.err")"
fi
# Class (e_ident[4]) and machine (e_machine) bytes changed in a copy: heapprof-run looks at
# them before anything runs.
cp "$out/gcc/sites" "$tmp/refuse/elf32" && printf '\001' |
    dd of="$tmp/refuse/elf32" bs=1 seek=4 conv=notrunc 2>/dev/null
run_refused heapprof-run-refuses-32-bit "is a 32-bit x86-64 ELF file but .* is a 64-bit" "$tmp/refuse/elf32"
cp "$out/gcc/sites" "$tmp/refuse/arm" && printf '\267' |
    dd of="$tmp/refuse/arm" bs=1 seek=18 conv=notrunc 2>/dev/null
run_refused heapprof-run-refuses-other-machine "is a 64-bit aarch64 ELF file but" "$tmp/refuse/arm"
# A shim library that make is relinking (empty, then cut short): said as such, not as a machine
# of unknown class.
: >"$tmp/refuse/empty.so"
head -c 10 "$shim" >"$tmp/refuse/cut.so"
env_shim=${HEAPPROF_SHIM-}
export HEAPPROF_SHIM="$tmp/refuse/empty.so"
run_refused heapprof-run-refuses-empty-shim "empty.so is not an ELF library (empty, or being rebuilt?)$" "$out/gcc/sites"
export HEAPPROF_SHIM="$tmp/refuse/cut.so"
run_refused heapprof-run-refuses-cut-shim "cut.so is a damaged ELF file (cut short, or being rebuilt?)$" "$out/gcc/sites"
if [ -n "$env_shim" ]; then export HEAPPROF_SHIM="$env_shim"; else unset HEAPPROF_SHIM; fi
# An -o whose directory does not exist: every process would run unprofiled, saying so.
run_refused heapprof-run-refuses-missing-output-dir "-o $tmp/no-such-dir/p.hpf: directory $tmp/no-such-dir does not exist" \
    -o "$tmp/no-such-dir/p.hpf" "$out/gcc/sites"
# What exec cannot run: one line of heapprof-run's, and a shell's status for it (126).
mkdir -p "$tmp/refuse/adir"
cp "$out/gcc/sites" "$tmp/refuse/noexec" && chmod 644 "$tmp/refuse/noexec"
for what in "adir:is a directory" "noexec:permission denied (not executable)"; do
    f=${what%%:*} msg=${what#*:}
    name=heapprof-run-cannot-run-$f
    "$top/scripts/heapprof-run" -q -o "$tmp/cr.%p.hpf" "$tmp/refuse/$f" >/dev/null 2>"$tmp/$name.err"
    rc=$?
    if [ $rc -eq 126 ] && [ "$(cat "$tmp/$name.err")" = "heapprof-run: $tmp/refuse/$f: $msg" ]; then
        ok "$name"
    else
        bad "$name" "rc=$rc, stderr: $(head -c 300 "$tmp/$name.err")"
    fi
done
if [ "$(id -u)" = 0 ]; then
    # Root running a program setuid to another user changes its effective id: no preload.
    cp "$out/gcc/sites" "$tmp/refuse/suid" && chown 65534 "$tmp/refuse/suid" && chmod 4755 "$tmp/refuse/suid"
    run_refused heapprof-run-refuses-setuid "is setuid/setgid" "$tmp/refuse/suid"
    # The kernel ignores the set-id bits of a #! script: it runs as the caller, and is profiled.
    name=heapprof-run-setuid-script
    printf '#!/bin/sh\nexec "%s"\n' "$out/gcc/sites" >"$tmp/refuse/suid.sh" &&
        chown 65534 "$tmp/refuse/suid.sh" && chmod 4755 "$tmp/refuse/suid.sh"
    "$top/scripts/heapprof-run" -q -o "$tmp/suidsh.%p.hpf" "$tmp/refuse/suid.sh" >/dev/null 2>"$tmp/suidsh.err"
    check "$name" exit "$(ls -t "$tmp"/suidsh.*.hpf 2>/dev/null | head -1)"
    # Setuid to root, run by root: nothing changes, the preload works, so it is profiled.
    name=heapprof-run-setuid-own
    cp "$out/gcc/sites" "$tmp/refuse/suid0" && chmod 4755 "$tmp/refuse/suid0"
    "$top/scripts/heapprof-run" -q -o "$tmp/suid0.%p.hpf" "$tmp/refuse/suid0" >/dev/null 2>"$tmp/suid0.err"
    check "$name" exit "$(ls "$tmp"/suid0.*.hpf 2>/dev/null | head -1)"
    # File capabilities, for a user who is not root (a directory that user can reach).
    capdir=$(mktemp -d)
    chmod 755 "$capdir"
    cp "$out/gcc/sites" "$capdir/capd" && setcap cap_net_raw+ep "$capdir/capd" 2>"$tmp/setcap.err" ||
        bad heapprof-run-refuses-capabilities "setcap failed (libcap2-bin): $(head -c 200 "$tmp/setcap.err")"
    setpriv --reuid=65534 --regid=65534 --clear-groups \
        "$top/scripts/heapprof-run" -q -o "$capdir/c.%p.hpf" "$capdir/capd" >/dev/null 2>"$tmp/cap.err"
    rc=$?
    if [ $rc -eq 2 ] && grep -q "^heapprof-run: .*has file capabilities (cap_net_raw=ep)" "$tmp/cap.err" &&
        ! ls "$capdir"/c.*.hpf >/dev/null 2>&1; then
        ok heapprof-run-refuses-capabilities
    else
        bad heapprof-run-refuses-capabilities "rc=$rc, stderr: $(head -c 300 "$tmp/cap.err")"
    fi
    rm -rf "$capdir"
else
    echo "note: heapprof-run's setuid and capability refusals are tested only when run as root"
fi

echo "$pass passed, $fail failed"
[ $fail -eq 0 ]
