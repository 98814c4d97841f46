#!/bin/bash
# Integration tests of the core shim: runs the hard-case programs of build/progs and a set of real
# programs bare and under LD_PRELOAD=build/libheapprof_shim.so, comparing exit status and stdout.
# Prints "ok NAME" / "FAIL NAME: reason" / "skip NAME: reason" per test and "N passed, M failed".
# The gcc builds run again under unwinder=fp, unwinder=libunwind, backend=glibc and profile=0
# (opt-*/NAME: the default is the cfi unwinder on the next backend).
# Usage (from anywhere): sh test/integration/run.sh [NAME-GLOB...]   e.g. 'gcc/t_fork' 'real/*'
# HEAPPROF_SHIM=path overrides the library under test (e.g. to try the harness with another one).
[ -n "${BASH_VERSION:-}" ] || exec bash "$0" "$@"
set -u

cd "$(dirname "$0")/../.." || exit 2
ROOT=$PWD
SHIM=${HEAPPROF_SHIM:-$ROOT/build/libheapprof_shim.so}
PROGS=$ROOT/build/progs
SRC=$ROOT/test/progs
JEMALLOC=/usr/lib/x86_64-linux-gnu/libjemalloc.so.2
TCMALLOC=/usr/lib/x86_64-linux-gnu/libtcmalloc_minimal.so.4
MIMALLOC=/usr/lib/x86_64-linux-gnu/libmimalloc.so.2
PROG_TIMEOUT=60
REAL_TIMEOUT=120

# Run from `make integration`, the environment carries make's job-server and level settings;
# the real-program tests must not inherit them (make.sh would print "Entering directory").
unset MAKEFLAGS MFLAGS MAKELEVEL MAKEOVERRIDES
TMP=$(mktemp -d /tmp/heapprof-it.XXXXXX) || exit 2
trap 'rm -rf "$TMP"' EXIT
ulimit -c 0 # the double-free test aborts on purpose; no core files in the tree

passed=0 failed=0 skipped=0
EXTRA_OPTS="" # more shim options for the current pass (see the option passes at the end)
FILTER=("$@")

# HEAPPROF_IT_TIMES=1 appends each test's wall time, to find the slow ones.
t_last=$(date +%s%N)
took=""
stamp() {
    [ "${HEAPPROF_IT_TIMES:-0}" = 1 ] || return 0
    local now
    now=$(date +%s%N)
    took=" [$(((now - t_last) / 1000000)) ms]"
    t_last=$now
}
ok() { stamp; echo "ok $1$took"; passed=$((passed + 1)); }
bad() { stamp; echo "FAIL $1: $2$took"; failed=$((failed + 1)); }
skip() { stamp; echo "skip $1: $2$took"; skipped=$((skipped + 1)); }

# wanted NAME: true when NAME matches one of the command-line globs (or there are none).
wanted() {
    [ ${#FILTER[@]} = 0 ] && return 0
    local g
    for g in "${FILTER[@]}"; do
        # shellcheck disable=SC2053
        [[ $1 == $g ]] && return 0
    done
    return 1
}

# describe STATUS: exit status in words, naming the signal of a killed process.
describe() {
    local s=$1
    if [ "$s" = 124 ]; then
        echo "timed out"
    elif [ "$s" -gt 128 ] && [ "$s" -lt 160 ]; then
        echo "killed by SIG$(kill -l $((s - 128)) 2>/dev/null || echo $((s - 128))) (status $s)"
    else
        echo "status $s"
    fi
}

# excerpt FILE: the first lines of a file on one line, for failure messages.
excerpt() {
    head -c 600 "$1" | head -n 6 | tr '\n' '|' | sed 's/|$//'
}

# run DIR PRELOAD TIMEOUT CMD...: runs CMD in a fresh DIR/cwd with stdin from /dev/null, stdout to
# DIR/out, stderr to DIR/err and the exit status in DIR/st. PRELOAD is the LD_PRELOAD value, empty
# for a bare run. Profiles go to DIR/prof (and the working directory is scratch, so a default
# output name lands there too, never in the repository). timeout itself runs bare: env applies
# the preload only to CMD.
run() {
    local dir=$1 preload=$2 limit=$3
    shift 3
    rm -rf "$dir"
    mkdir -p "$dir/cwd" "$dir/prof"
    local envs=()
    if [ -n "$preload" ]; then
        envs=(LD_PRELOAD="$preload" HEAPPROF_OPTIONS="output=$dir/prof/%p.hpf${EXTRA_OPTS:+:$EXTRA_OPTS}")
        # shim-only promises are checked only when the real shim is the first allocator in line
        case $preload in "$SHIM"*) envs+=(HEAPPROF_TEST_UNDER_SHIM=1) ;; esac
    fi
    # The subshell waits for timeout itself, so bash's "Aborted" notice for a killed child goes
    # to the discarded stderr of the subshell instead of cluttering the test output.
    (
        cd "$dir/cwd" || exit 2
        timeout -k 5 "$limit" env ${envs[@]+"${envs[@]}"} "$@" >"$dir/out" 2>"$dir/err" </dev/null
        echo $? >"$dir/st"
    ) 2>/dev/null
    [ -s "$dir/st" ] || echo 2 >"$dir/st"
}

# compare NAME BAREDIR TESTDIR WHAT: checks that the run in TESTDIR matches the bare one (status
# and stdout byte for byte) and that the bare run itself passed (status 0, no FAIL line).
# Prints the verdict. WHAT names the test run in messages ("under shim", ...).
compare() {
    local name=$1 b=$2 t=$3 what=$4
    local bst tst
    bst=$(cat "$b/st") tst=$(cat "$t/st")
    if [ "$bst" != 0 ]; then
        bad "$name" "bare run failed ($(describe "$bst")), test or environment broken: $(excerpt "$b/out") $(excerpt "$b/err")"
    elif [ "$tst" != "$bst" ]; then
        bad "$name" "$what: $(describe "$tst"), bare: 0; stdout: $(excerpt "$t/out"); stderr: $(excerpt "$t/err")"
    elif ! cmp -s "$b/out" "$t/out"; then
        bad "$name" "$what: stdout differs from bare: $(diff "$b/out" "$t/out" | head -n 8 | tr '\n' '|'); stderr: $(excerpt "$t/err")"
    else
        ok "$name"
    fi
}

have_shim() {
    if [ ! -f "$SHIM" ]; then
        bad "$1" "shim not built: $SHIM is missing (make build/libheapprof_shim.so)"
        return 1
    fi
}

have_prog() {
    if [ ! -x "$2" ]; then
        bad "$1" "test program not built: $2 is missing (make progs)"
        return 1
    fi
}

# ---------------------------------------------------------------------------------------------
# Hard-case programs: bare vs shim, for each compiler.
prog_names() {
    local f
    for f in "$SRC"/t_*.c "$SRC"/t_*.cc; do
        [ -e "$f" ] || continue
        f=${f##*/}
        echo "${f%.*}"
    done
}

prog_test() {
    local cc=$1 n=$2 name="${3:-$1}/$2"
    wanted "$name" || return 0
    local bin=$PROGS/$cc/$n w=$TMP/$cc.$n
    have_shim "$name" && have_prog "$name" "$bin" || return 0
    run "$w.bare" "" $PROG_TIMEOUT "$bin"
    run "$w.shim" "$SHIM" $PROG_TIMEOUT "$bin"
    compare "$name" "$w.bare" "$w.shim" "under shim"
}

# The double free aborts in glibc's own check bare; under the shim the expected outcome is the
# same SIGABRT after a "heapprof:" report on stderr.
double_free_test() {
    local cc=$1 name="$1/t_double_free"
    wanted "$name" || return 0
    local bin=$PROGS/$cc/t_double_free w=$TMP/$cc.t_double_free
    have_shim "$name" && have_prog "$name" "$bin" || return 0
    run "$w.bare" "" $PROG_TIMEOUT "$bin"
    run "$w.shim" "$SHIM" $PROG_TIMEOUT "$bin"
    local bst tst
    bst=$(cat "$w.bare/st") tst=$(cat "$w.shim/st")
    if [ "$bst" != 134 ]; then
        bad "$name" "bare run: expected SIGABRT from glibc, got $(describe "$bst")"
    elif [ "$tst" != 134 ]; then
        bad "$name" "under shim: expected SIGABRT like bare, got $(describe "$tst"); stderr: $(excerpt "$w.shim/err")"
    elif ! grep -q '^heapprof:' "$w.shim/err"; then
        bad "$name" "under shim: no line starting 'heapprof:' on stderr: $(excerpt "$w.shim/err")"
    elif ! cmp -s "$w.bare/out" "$w.shim/out"; then
        bad "$name" "under shim: stdout differs: $(excerpt "$w.shim/out")"
    else
        ok "$name"
    fi
}

# The ASan builds can't be preloaded (ASan must come first); they run bare and must match the
# plain build's output.
san_test() {
    local n=$1 name="san/$1"
    wanted "$name" || return 0
    local bin=$PROGS/gcc-san/$n w=$TMP/san.$n
    have_prog "$name" "$bin" && have_prog "$name" "$PROGS/gcc/$n" || return 0
    run "$w.plain" "" $PROG_TIMEOUT "$PROGS/gcc/$n"
    run "$w.san" "" $PROG_TIMEOUT "$bin"
    compare "$name" "$w.plain" "$w.san" "ASan+UBSan build"
}

# ---------------------------------------------------------------------------------------------
# Preload order: the shim stacked with another malloc replacement, either one first. Each
# combination must behave like a bare run; if the other allocator alone already differs, the
# combination is skipped (not the shim's problem).
# PROG is a test program name or real/SCRIPT (a script of test/integration/real, run with bash).
# KIND rules (tests rules/*): where allocators answer differently (t_alignargs: memalign with an
# alignment of 0 or not a power of two; t_zero: realloc(p, 0)), the shim must answer as the
# allocator under it does without the shim: each order is compared with the allocator alone,
# not with glibc.
preload_test() {
    local alloc=$1 label=$2 prog=$3 kind=${4:-preload} name
    local bin=$PROGS/gcc/$prog w=$TMP/$kind.$label.${prog//\//.}
    local cmd=("$bin")
    case $prog in
    real/*)
        bin=$ROOT/test/integration/$prog.sh
        cmd=(bash "$bin")
        ;;
    esac
    for order in first second; do
        name="$kind/$label-$order/$prog"
        wanted "$name" || continue
        if [ ! -f "$alloc" ]; then
            skip "$name" "$alloc not installed"
            continue
        fi
        have_shim "$name" || continue
        if [ ! -e "$bin" ]; then
            bad "$name" "test program not built: $bin is missing (make progs)"
            continue
        fi
        [ -d "$w.alone" ] || run "$w.alone" "$alloc" $PROG_TIMEOUT "${cmd[@]}"
        local ref=$w.alone against=" against $label alone"
        if [ "$kind" = preload ]; then
            [ -d "$w.bare" ] || run "$w.bare" "" $PROG_TIMEOUT "${cmd[@]}"
            if [ "$(cat "$w.alone/st")" != "$(cat "$w.bare/st")" ] || ! cmp -s "$w.bare/out" "$w.alone/out"; then
                skip "$name" "$label alone already differs from bare ($(describe "$(cat "$w.alone/st")"))"
                continue
            fi
            ref=$w.bare against=""
        fi
        if [ $order = first ]; then
            run "$w.$order" "$alloc $SHIM" $PROG_TIMEOUT "${cmd[@]}"
            compare "$name" "$ref" "$w.$order" "LD_PRELOAD=\"$label shim\"$against"
        else
            run "$w.$order" "$SHIM $alloc" $PROG_TIMEOUT "${cmd[@]}"
            compare "$name" "$ref" "$w.$order" "LD_PRELOAD=\"shim $label\"$against"
        fi
    done
}

# ---------------------------------------------------------------------------------------------
# What the shim itself defines whatever allocator is under it (C++ operator new: the standard's
# new_handler loop, nullptr from the nothrow forms; t_new_delete): with the allocator preloaded
# after the shim, as its backend, the program must behave as it does bare on glibc, even where
# the allocator alone behaves otherwise (mimalloc's nothrow new never calls the new_handler).
over_test() {
    local alloc=$1 label=$2 prog=$3 name
    local bin=$PROGS/gcc/$prog w=$TMP/over.$label.$prog
    name="over/$label/$prog"
    wanted "$name" || return 0
    if [ ! -f "$alloc" ]; then
        skip "$name" "$alloc not installed"
        return 0
    fi
    have_shim "$name" || return 0
    have_prog "$name" "$bin" || return 0
    [ -d "$TMP/over.bare.$prog" ] || run "$TMP/over.bare.$prog" "" $PROG_TIMEOUT "$bin"
    run "$w" "$SHIM $alloc" $PROG_TIMEOUT "$bin"
    compare "$name" "$TMP/over.bare.$prog" "$w" "LD_PRELOAD=\"shim $label\""
}

# ---------------------------------------------------------------------------------------------
# Exported symbols: nm -D --defined-only must list exactly the global: names of the version script,
# and every one of them must be defined in shim/interpose/ (its files built here without link-time
# optimisation, whose objects would not list what top-level assembly defines).
exports_test() {
    local name=exports
    wanted "$name" || return 0
    have_shim "$name" || return 0
    local map=$ROOT/shim/interpose/libheapprof.map
    if [ ! -f "$map" ]; then
        bad "$name" "$map is missing"
        return 0
    fi
    local src objs=() msg
    mkdir -p "$TMP/interpose"
    for src in "$ROOT"/shim/interpose/*.c; do
        objs+=("$TMP/interpose/$(basename "$src" .c).o")
        if ! msg=$(${CC:-cc} -std=gnu11 -D_GNU_SOURCE -fPIC -pthread -I"$ROOT/shim" -I"$ROOT" -I"$ROOT/include" \
            -c "$src" -o "${objs[-1]}" 2>&1); then
            bad "$name" "cannot build $src: $(echo "$msg" | head -3 | tr '\n' ' ')"
            return 0
        fi
    done
    if msg=$(perl "$ROOT/test/integration/check_exports.pl" "$map" "$SHIM" "${objs[@]}" 2>&1); then
        ok "$name"
    else
        bad "$name" "$(echo "$msg" | tr '\n' ' ')"
    fi
}

# calls_test NAME PATTERN ALLOWED: NAME fails when an instruction of the built library matching
# PATTERN (an awk regex: a call of some functions) is in a function whose name does not match
# ALLOWED (an awk regex of whole names).
calls_test() {
    local name=$1 pattern=$2 allowed=$3 msg
    wanted "$name" || return 0
    have_shim "$name" || return 0
    if ! command -v objdump >/dev/null 2>&1; then
        skip "$name" "objdump not found"
        return 0
    fi
    msg=$(objdump -d --no-show-raw-insn "$SHIM" | awk -v pattern="$pattern" -v allowed="^($allowed)\$" '
        /^[0-9a-f]+ <.*>:$/ { fn = $2; gsub(/[<>:]/, "", fn); sub(/\..*/, "", fn) }
        $0 ~ pattern && fn !~ allowed { print fn " calls " $NF }' | sort -u)
    if [ -n "$msg" ]; then
        bad "$name" "$(echo "$msg" | tr '\n' ';')"
    else
        ok "$name"
    fi
}

# libc's memcpy, memmove and memset are for the program's memory only (calloc's zeroing,
# realloc's copy, sigaction's answer, mimalloc's API in core/mimalloc.c): the shim's metadata
# must never go through them (they may be interposed, and sanitizers watch them; docs/DESIGN.md).
# Compilers turn copy loops and large struct assignments into such calls on their own, so the
# built library is checked: only the functions that handle the program's memory may call them
# (the core's, or the entry points link-time optimisation inlined them into).
libcalls_test() {
    calls_test libcalls 'call.*<(memcpy|memmove|memset)(@plt)?>' \
        'hp_alloc|hp_alloc_x|hp_alloc_from|hp_calloc|hp_realloc|hp_reallocarray|move_block|realloc_realign|(hp_)?(rallocx|xallocx|mallocx)|calloc|realloc|reallocarray|(hp_)?sigaction|(hp_)?mi_[a-z_]+|do_realloc|do_realloc_aligned|moved|dup_bytes|heap_dup|new_realloc'
}

# No cancellation point of libc on any path of the shim: a thread cancelled (pthread_cancel)
# inside one would leave the shim with its locks held, and the process would hang at its next
# dump, fork or exit (test/profiling/cancel.c). The shim's waits and file work use raw system
# calls (hp_sleep_ns, hp_sys_open, syscall(SYS_write, ...)). The one exception is the
# dump_interval_ms thread, which is the shim's own: nothing cancels it.
cancelpoints_test() {
    calls_test cancel-points \
        '(call|jmp).*<(nanosleep|clock_nanosleep|usleep|sleep|read|write|pread|pread64|pwrite|pwrite64|open|open64|openat|openat64|close|fcntl|fcntl64|fsync|fdatasync|msync|wait|waitpid|waitid|wait4|poll|ppoll|select|pselect|pause|sigsuspend|sigwait|sigwaitinfo|sigtimedwait|accept|accept4|connect|recv|recvfrom|recvmsg|send|sendto|sendmsg|readv|writev|preadv|pwritev|lockf|system|tcdrain|creat|epoll_wait|epoll_pwait|sem_wait|sem_timedwait|pthread_join|pthread_cond_wait|pthread_cond_timedwait|pthread_testcancel|fopen|fclose|fwrite|fread|fflush|fprintf|printf|puts)(@plt)?>' \
        interval_thread
}

# The instruction decoder of the allocator patcher (backend/x86.c) against objdump, on the
# first instructions of every function libc and libstdc++ export.
x86_test() {
    local name=x86-decoder lib msg
    wanted "$name" || return 0
    local bin=$TMP/x86_boundaries
    if ! cc -O1 -I"$ROOT/backend" -o "$bin" "$ROOT/test/integration/x86_boundaries.c" "$ROOT/backend/x86.c" -ldl; then
        bad "$name" "cannot build test/integration/x86_boundaries.c"
        return 0
    fi
    for lib in /lib/x86_64-linux-gnu/libc.so.6 /usr/lib/x86_64-linux-gnu/libstdc++.so.6; do
        if [ ! -f "$lib" ]; then
            skip "$name/${lib##*/}" "$lib not found"
            continue
        fi
        if msg=$(nm -D --defined-only "$lib" | awk '$2 == "T" || $2 == "W" {sub(/@.*/, "", $3); print $3}' |
            sort -u | "$bin" "$lib" | python3 "$ROOT/test/integration/check_x86.py" "$lib" 2>&1); then
            ok "$name/${lib##*/}"
        else
            bad "$name/${lib##*/}" "$(echo "$msg" | tail -3 | tr '\n' ' ')"
        fi
    done
}

# ---------------------------------------------------------------------------------------------
# Real programs: each is a bash script in test/integration/real/ run in a scratch directory, bare
# and with the whole process tree preloaded (bash included). A script prints only deterministic
# text; one whose first line says "# requires: TOOL..." is skipped when a tool is missing.
real_test() {
    local script=$1 base name
    base=${script##*/}
    base=${base%.sh}
    name="real/$base"
    wanted "$name" || return 0
    local tool missing=""
    for tool in $(sed -n '1,3s/^# requires: //p' "$script"); do
        command -v "$tool" >/dev/null 2>&1 || missing="$missing $tool"
    done
    if [ -n "$missing" ]; then
        skip "$name" "not installed:$missing"
        return 0
    fi
    have_shim "$name" || return 0
    local w=$TMP/real.$base
    run "$w.bare" "" $REAL_TIMEOUT bash "$script"
    run "$w.shim" "$SHIM" $REAL_TIMEOUT bash "$script"
    compare "$name" "$w.bare" "$w.shim" "under shim"
}

# ---------------------------------------------------------------------------------------------
if [ ! -f "$SHIM" ]; then
    echo "# $SHIM is missing: every test that needs it fails" >&2
fi

exports_test
libcalls_test
cancelpoints_test
[ "$(uname -m)" = x86_64 ] && x86_test

for n in $(prog_names); do
    for cc in gcc clang; do
        case $n in
        t_double_free) double_free_test $cc ;;
        *) prog_test $cc "$n" ;;
        esac
    done
done

# The same programs (gcc builds) under non-default shim configurations.
for opts in unwinder=fp unwinder=libunwind backend=glibc profile=0; do
    EXTRA_OPTS=$opts
    for n in $(prog_names); do
        [ "$n" = t_double_free ] || prog_test gcc "$n" "opt-$opts"
    done
done
EXTRA_OPTS=""

for n in $(sed -n 's/^SAN_PROGS="\(.*\)"/\1/p' "$SRC/build.sh"); do
    san_test "$n"
done

for prog in t_libc t_stl t_first_race t_fork t_realloc t_late_free t_threads \
    real/python3_pymalloc_off real/git; do
    preload_test "$JEMALLOC" jemalloc $prog
    preload_test "$TCMALLOC" tcmalloc $prog
    preload_test "$MIMALLOC" mimalloc $prog
done
preload_test "$JEMALLOC" jemalloc t_alignargs rules
preload_test "$TCMALLOC" tcmalloc t_alignargs rules
preload_test "$MIMALLOC" mimalloc t_alignargs rules
preload_test "$JEMALLOC" jemalloc t_zero rules
preload_test "$TCMALLOC" tcmalloc t_zero rules
preload_test "$MIMALLOC" mimalloc t_zero rules
# A program written against mimalloc's own API, with mimalloc preloaded before the shim
# (patched) and after it (as linked).
preload_test "$MIMALLOC" mimalloc t_mimalloc_api
over_test "$JEMALLOC" jemalloc t_new_delete
over_test "$TCMALLOC" tcmalloc t_new_delete
over_test "$MIMALLOC" mimalloc t_new_delete
# Every real program on jemalloc, preloaded before the shim (patched) and after it.
for script in "$ROOT"/test/integration/real/*.sh; do
    base=${script##*/}
    case $base in python3_pymalloc_off.sh | git.sh) continue ;; esac # done above
    [ -e "$script" ] && preload_test "$JEMALLOC" jemalloc "real/${base%.sh}"
done

for script in "$ROOT"/test/integration/real/*.sh; do
    [ -e "$script" ] && real_test "$script"
done

echo "$passed passed, $failed failed"
[ "$failed" = 0 ]
