# Access profiling end to end (issue 41), sourced by the cases test/profiling/cases/access-*.sh:
# programs built by scripts/heapprof-cc, run bare and under scripts/heapprof-run, their profiles
# read by heapprof-report and checked. Needs ok, bad and skip (verdict lines), ROOT
# (the tree), BUILD (make's output, with the shim, the report tool and the runtime) and TMP
# (scratch); REPORT is the report tool (the sanitized one when built).
# shellcheck shell=bash

ACCESS_SRC=$ROOT/test/access
HEAPPROF_CC=$ROOT/scripts/heapprof-cc
HEAPPROF_RUN=$ROOT/scripts/heapprof-run

# access_env MODE: the environment heapprof-cc takes for a mode of the tests: inline, callbacks,
# gcc, clang16 (inline, with clang-16).
access_env() {
    case $1 in
    inline) echo "HEAPPROF_CC=clang HEAPPROF_CC_MODE=inline" ;;
    callbacks) echo "HEAPPROF_CC=clang HEAPPROF_CC_MODE=callbacks" ;;
    gcc) echo "HEAPPROF_CC=gcc" ;;
    gcc-asan) echo "HEAPPROF_CC=gcc HEAPPROF_GCC_INSTR=asan" ;; # (what gcc before 10 gets)
    clang16) echo "HEAPPROF_CC=clang-16 HEAPPROF_CC_MODE=inline" ;;
    esac
}

# access_modes: the modes this machine can build (clang-16 only when installed).
access_modes() {
    echo inline callbacks gcc
    command -v clang-16 >/dev/null 2>&1 && echo clang16
}

# access_need NAME: the pieces every access check uses; a failed check NAME when one is missing.
access_need() {
    local f
    for f in "$BUILD/libheapprof_shim.so" "$REPORT" "$BUILD/libheapprof_rt.a"; do
        if [ ! -e "$f" ]; then
            bad "$1" "$f is missing (make all)"
            return 1
        fi
    done
}

# access_profile NAME DIR CMD...: CMD under heapprof-run, its stdout in DIR/run.out, its profile
# as JSON in DIR/report.json and as text in DIR/report.txt. A failed check NAME if anything fails.
access_profile() {
    local name=$1 dir=$2 st
    shift 2
    rm -f "$dir"/p.*.hpf
    timeout -k 5 300 "$HEAPPROF_RUN" -q -o "$dir/p.%p.hpf" "$@" >"$dir/run.out" 2>"$dir/run.err"
    st=$?
    if [ $st != 0 ]; then
        bad "$name" "under heapprof-run: status $st: $(head -c 300 "$dir/run.err" | tr '\n' '|')"
        return 1
    fi
    set -- "$dir"/p.*.hpf
    if [ $# != 1 ] || [ ! -f "$1" ]; then
        bad "$name" "expected one profile in $dir, found: $*"
        return 1
    fi
    if ! "$REPORT" --format json -o "$dir/report.json" "$1" 2>"$dir/report.err" ||
        ! "$REPORT" -o "$dir/report.txt" "$1" 2>>"$dir/report.err"; then
        bad "$name" "heapprof-report failed: $(head -c 300 "$dir/report.err" | tr '\n' '|')"
        return 1
    fi
}

# access_sites NAME MODE SRC [LINK...]: SRC built by heapprof-cc in MODE (with LINK: objects,
# flags) into $TMP/NAME, run bare, then under heapprof-run (HEAPPROF_OPTIONS passed on) with the
# same output, its report in $TMP/NAME/report.json. 0 when all that went well; otherwise a
# failed check NAME and 1.
access_sites() {
    local name=$1 m=$2 src=$3 d=$TMP/$1
    shift 3
    access_need "$name" || return 1
    mkdir -p "$d"
    # shellcheck disable=SC2046
    if ! env $(access_env "$m") "$HEAPPROF_CC" -O2 -o "$d/prog" "$src" "$@" 2>"$d/build.err"; then
        bad "$name" "build: $(head -c 400 "$d/build.err" | tr '\n' '|')"
        return 1
    fi
    if ! "$d/prog" >"$d/bare.out" 2>&1; then
        bad "$name" "bare: $(head -c 300 "$d/bare.out")"
        return 1
    fi
    access_profile "$name" "$d" "$d/prog" || return 1
    if ! cmp -s "$d/bare.out" "$d/run.out"; then
        bad "$name" "output differs under heapprof-run: $(diff "$d/bare.out" "$d/run.out" | head -4 | tr '\n' '|')"
        return 1
    fi
}

# access_patterns_plain DIR: patterns.c and its library built plainly by gcc, and what that
# prints (DIR/plain.out): what every instrumented build must print, bare or profiled.
access_patterns_plain() {
    local d=$1
    mkdir -p "$d"
    [ -s "$d/plain.out" ] && return 0
    gcc -O2 -g -o "$d/libaccess_lib.so" -fPIC -shared "$ACCESS_SRC/access_lib.c" &&
        gcc -O2 -g -o "$d/patterns" "$ACCESS_SRC/patterns.c" -L"$d" -laccess_lib -Wl,-rpath,"$d" &&
        "$d/patterns" >"$d/plain.out"
}

# access_patterns_build MODE DIR: patterns.c and access_lib.c built by heapprof-cc in MODE, the
# library compiled and linked apart, into DIR (DIR/build.err: the compilers' messages).
access_patterns_build() {
    local m=$1 d=$2
    mkdir -p "$d"
    # shellcheck disable=SC2046
    env $(access_env "$m") "$HEAPPROF_CC" -O2 -fPIC -c -o "$d/access_lib.o" "$ACCESS_SRC/access_lib.c" 2>"$d/build.err" &&
        env $(access_env "$m") "$HEAPPROF_CC" -shared -o "$d/libaccess_lib.so" "$d/access_lib.o" 2>>"$d/build.err" &&
        env $(access_env "$m") "$HEAPPROF_CC" -O2 -o "$d/patterns" "$ACCESS_SRC/patterns.c" -L"$d" \
            -laccess_lib -Wl,-rpath,"$d" 2>>"$d/build.err"
}

# access_patterns_check MODE: patterns.c and access_lib.c built by heapprof-cc in MODE (the
# library compiled and linked apart), run bare (the plain build's output), then under
# heapprof-run (the same output), the report's per-site figures against patterns.expected
# (check_report.py), and the text report's access lines.
access_patterns_check() {
    local m=$1 d=$TMP/patterns-$1 msg
    access_need "patterns-$m" || return 0
    if ! access_patterns_plain "$TMP/patterns-plain"; then
        bad "patterns-$m-plain" "the plain gcc build of patterns.c failed"
        return 0
    fi
    if ! access_patterns_build "$m" "$d"; then
        bad "patterns-$m-build" "$(head -c 400 "$d/build.err" | tr '\n' '|')"
        return 0
    fi
    if "$d/patterns" >"$d/bare.out" 2>"$d/bare.err" && cmp -s "$d/bare.out" "$TMP/patterns-plain/plain.out"; then
        ok "patterns-$m-bare"
    else
        bad "patterns-$m-bare" "without the shim: $(diff "$TMP/patterns-plain/plain.out" "$d/bare.out" | head -4 | tr '\n' '|') $(head -c 200 "$d/bare.err")"
    fi
    access_profile "patterns-$m-profiled" "$d" "$d/patterns" || return 0
    if cmp -s "$d/run.out" "$TMP/patterns-plain/plain.out"; then
        ok "patterns-$m-same-output"
    else
        bad "patterns-$m-same-output" "under heapprof-run: $(diff "$TMP/patterns-plain/plain.out" "$d/run.out" | head -4 | tr '\n' '|')"
    fi
    if msg=$(python3 "$ACCESS_SRC/check_report.py" "$ACCESS_SRC/patterns.expected" "$m" \
        "$d/report.json" "$ACCESS_SRC/patterns.c" 2>&1); then
        ok "patterns-$m-counts"
    else
        bad "patterns-$m-counts" "$(echo "$msg" | head -6 | tr '\n' ';')"
    fi
    # The text report says how the program was built and shows the access lines.
    local want
    case $m in
    gcc) want="  access       gcc callbacks, reads and writes apart;" ;;
    callbacks) want="  access       clang callbacks, reads and writes apart;" ;;
    *) want="  access       clang inline counters, reads and writes together;" ;;
    esac
    if grep -qF -- "$want" "$d/report.txt" && grep -q '^    histogram  |' "$d/report.txt" &&
        grep -q '^hottest per byte' "$d/report.txt"; then
        ok "patterns-$m-text"
    else
        bad "patterns-$m-text" "no '$want', histogram or hottest lines: $(grep -m3 'access\|histogram' "$d/report.txt" | tr '\n' '|')"
    fi
    # Per-word strips (and the fields site's saturated word) in callback builds, none inline.
    local words
    words=$(grep -c '^    words      |' "$d/report.txt")
    case $m in
    gcc | callbacks)
        if [ "$words" -gt 0 ] && grep -q '^    per word   404 4 0 1020+ 48$' "$d/report.txt" &&
            grep -q '^  words        per-8-byte-word histograms of blocks up to 256 B' "$d/report.txt"; then
            ok "patterns-$m-text-words"
        else
            bad "patterns-$m-text-words" "$words word strips; $(grep -m3 'words\|per word' "$d/report.txt" | tr '\n' '|')"
        fi ;;
    *)
        if [ "$words" = 0 ] && grep -q '^  words        no per-word histograms' "$d/report.txt"; then
            ok "patterns-$m-text-words"
        else
            bad "patterns-$m-text-words" "$words word strips in an inline build; $(grep -m2 '^  words' "$d/report.txt" | tr '\n' '|')"
        fi ;;
    esac
}

# access_crosscheck CLANG: crosscheck.c under LLVM's own MemProf runtime (llvm_crosscheck.sh)
# and its heapprof-cc build (the same clang, inline) under heapprof-run: per site the same
# allocation count, average size and total accesses (docs/USAGE.md, "Compared with LLVM's
# runtime", says why they can be equal and when they are not).
access_crosscheck() {
    local clang=$1 name=crosscheck-$1 d=$TMP/crosscheck-$1
    access_need "$name" || return 0
    mkdir -p "$d"
    if ! sh "$ACCESS_SRC/llvm_crosscheck.sh" "$d/llvm" "$clang" >"$d/llvm.sites" 2>"$d/llvm.err" ||
        [ ! -s "$d/llvm.sites" ]; then
        bad "$name-llvm" "LLVM's runtime gave no figures: $(head -c 300 "$d/llvm.err" | tr '\n' '|')"
        return 0
    fi
    if ! HEAPPROF_CC=$clang HEAPPROF_CC_MODE=inline "$HEAPPROF_CC" -O2 -o "$d/crosscheck" \
        "$ACCESS_SRC/crosscheck.c" 2>"$d/build.err"; then
        bad "$name-build" "$(head -c 300 "$d/build.err" | tr '\n' '|')"
        return 0
    fi
    access_profile "$name" "$d" "$d/crosscheck" || return 0
    python3 - "$d/report.json" >"$d/heapprof.sites" <<'EOF'
import json, sys
sites = {}
doc = json.load(open(sys.argv[1]))
for c in doc['contexts']:
    fn = doc['frame_table'][c['frames'][0]]['function'] if c['frames'] else ''
    if fn.startswith('site_') and c['alloc_count']:
        s = sites.setdefault(fn[5:], [0, 0, 0])
        s[0] += c['alloc_count']; s[1] += c['total_size']; s[2] += c['total_access_count']
for k in sorted(sites):
    n, size, acc = sites[k]
    print(k, n, size // n, acc)
EOF
    if cmp -s "$d/llvm.sites" "$d/heapprof.sites"; then
        ok "$name"
    else
        bad "$name" "LLVM: $(tr '\n' ';' <"$d/llvm.sites") heapprof: $(tr '\n' ';' <"$d/heapprof.sites")"
    fi
}

# access_real: a real C program built from its own sources with heapprof-cc: Lua 5.4 (Debian's
# lua5.4 source package, fetched once into $BUILD/access-src by debian_source.sh; skipped when
# it cannot be had), `make linux CC=heapprof-cc`, running workload.lua: the same output as a
# plain gcc build, bare and under heapprof-run, and accesses at its hot sites: the 5 contexts
# of the lua executable with the most bytes each have accesses and a histogram or blocks too
# big for one, and the text report lists them among the hottest or cold.
access_real() {
    local name=real-lua d=$TMP/lua src tarball msg
    access_need "$name" || return 0
    src=$BUILD/access-src
    mkdir -p "$src" "$d"
    if ! tarball=$(sh "$ACCESS_SRC/debian_source.sh" lua5.4 "$src" 2>"$d/fetch.err"); then
        skip "$name" "Lua's sources could not be had: $(head -c 200 "$d/fetch.err")"
        return 0
    fi
    local flavour cc
    for flavour in plain heapprof; do
        mkdir -p "$d/$flavour"
        tar -xzf "$tarball" -C "$d/$flavour" --strip-components=1 || { bad "$name-build" "tar failed"; return 0; }
        cc=gcc
        [ $flavour = heapprof ] && cc=$HEAPPROF_CC
        if ! make -C "$d/$flavour/src" -j2 linux CC="$cc" MYCFLAGS=-g >"$d/$flavour.build" 2>&1; then
            bad "$name-build-$flavour" "$(tail -c 400 "$d/$flavour.build" | tr '\n' '|')"
            return 0
        fi
    done
    if ! nm "$d/heapprof/src/lua" | grep -q ' U __memprof_version_mismatch_check_v1\| T __memprof_version_mismatch_check_v1'; then
        bad "$name-build-heapprof" "the heapprof-cc build of lua has no MemProf instrumentation"
        return 0
    fi
    ok "$name-build"
    (cd "$d" && plain/src/lua "$ACCESS_SRC/workload.lua") >"$d/plain.out" 2>&1
    (cd "$d" && heapprof/src/lua "$ACCESS_SRC/workload.lua") >"$d/bare.out" 2>&1
    if [ -s "$d/plain.out" ] && grep -qx done "$d/plain.out" && cmp -s "$d/plain.out" "$d/bare.out"; then
        ok "$name-bare"
    else
        bad "$name-bare" "$(diff "$d/plain.out" "$d/bare.out" | head -4 | tr '\n' '|')"
    fi
    access_profile "$name-profiled" "$d" "$d/heapprof/src/lua" "$ACCESS_SRC/workload.lua" || return 0
    if cmp -s "$d/plain.out" "$d/run.out"; then
        ok "$name-same-output"
    else
        bad "$name-same-output" "$(diff "$d/plain.out" "$d/run.out" | head -4 | tr '\n' '|')"
    fi
    if msg=$(python3 - "$d/report.json" <<'PY'
import json, sys
doc = json.load(open(sys.argv[1]))
for c in doc['contexts']:  # schema 2: frames are indices into the frame table
    c['frames'] = [doc['frame_table'][i] for i in c['frames']]
a = doc['access']
bad = []
if a is None or a['modes'] != ['inline'] or not any(m.endswith('/src/lua') for m in a['instrumented_modules']):
    bad.append('access: %s' % a)
own = [c for c in doc['contexts'] if c['frames'] and c['frames'][0]['module'].endswith('/src/lua')]
hot = sorted(own, key=lambda c: (-c['total_size'], c['context_id']))[:5]
if len(hot) < 5:
    bad.append('only %d contexts in lua' % len(hot))
for c in hot:
    where = '%s (context %d, %d bytes)' % (c['frames'][0]['function'], c['context_id'], c['total_size'])
    if c['total_access_count'] == 0 or c['max_percent_utilized'] == 0:
        bad.append('%s: %d accesses, utilised up to %d%%' % (where, c['total_access_count'], c['max_percent_utilized']))
total = sum(c['total_access_count'] for c in own)
print('lua: %d contexts, %d accesses; the 5 largest: %s' % (len(own), total,
      ', '.join('%d B %d acc' % (c['total_size'], c['total_access_count']) for c in hot)))
for b in bad:
    print(b)
sys.exit(1 if bad else 0)
PY
    ); then
        ok "$name-hot-sites"
        echo "   $msg"
    else
        bad "$name-hot-sites" "$(echo "$msg" | head -6 | tr '\n' ';')"
    fi
}
