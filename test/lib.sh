# Helpers of the integration and profiling cases, sourced by test/run.sh's case driver
# (hp_case_run) and by test/profiling/build.sh. Paths, check verdicts, runs under the shim,
# profile checks (check_sites.py), and the builds of the programs the cases run.
# shellcheck shell=bash disable=SC2034

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
BUILD=$ROOT/build
SHIM=${HEAPPROF_SHIM:-$BUILD/libheapprof_shim.so}
# The sanitized report tool when it is built (make integration builds it).
REPORT=$BUILD/heapprof-report-san
[ -x "$REPORT" ] || REPORT=$BUILD/heapprof-report
# The public header's folder, for programs that call heapprof_dump(): include/ once the header
# lives there, shim/ before.
if [ -f "$ROOT/include/heapprof.h" ]; then HP_INC=$ROOT/include; else HP_INC=$ROOT/shim; fi
PROGS=$BUILD/progs    # test/progs, built by test/progs/build.sh
PBIN=$BUILD/profiling # test/profiling programs, {gcc,clang}/NAME
JEMALLOC=/usr/lib/x86_64-linux-gnu/libjemalloc.so.2
TCMALLOC=/usr/lib/x86_64-linux-gnu/libtcmalloc_minimal.so.4
MIMALLOC=/usr/lib/x86_64-linux-gnu/libmimalloc.so.2
MALLOC_DEBUG=/usr/lib/x86_64-linux-gnu/libc_malloc_debug.so.0 # glibc's malloc debugging library
# Case exit statuses (as jemalloc's test harness has them).
HP_PASS=0 HP_SKIP=1 HP_FAIL=2

# ---------------------------------------------------------------------------------------------
# Verdicts: one line a check, "ok NAME", "FAIL NAME: reason" or "skip NAME: reason". Each is
# also appended to $HP_CHECKS, so that checks made in a subshell count too.
HP_CHECKS=/dev/null
ok() { echo "ok $1"; echo ok >>"$HP_CHECKS"; }
bad() { echo "FAIL $1: $2"; echo FAIL >>"$HP_CHECKS"; }
skip() { echo "skip $1: $2"; echo skip >>"$HP_CHECKS"; }

# hp_case_run FILE: runs one case file (test/run.sh calls it, one bash process a case), with
# the working directory at the top of the tree and $TMP a scratch directory of the case's
# own ($HP_CASE_TMP, or a new one removed at the end). Exits HP_PASS, HP_SKIP (every check
# skipped) or HP_FAIL (a check failed, none ran, or the case stopped before its end).
hp_case_run() {
    set -u
    case $1 in /*) HP_CASE_FILE=$1 ;; *) HP_CASE_FILE=$PWD/$1 ;; esac
    cd "$ROOT" || exit $HP_FAIL
    if [ -n "${HP_CASE_TMP:-}" ]; then
        TMP=$HP_CASE_TMP
    else
        TMP=$(mktemp -d /tmp/heapprof-case.XXXXXX) || exit $HP_FAIL
        HP_OWN_TMP=1
    fi
    HP_CHECKS=$TMP.checks
    : >"$HP_CHECKS"
    trap hp_case_exit EXIT
    # shellcheck disable=SC1090
    . "$HP_CASE_FILE"
    HP_CASE_ENDED=1
    exit
}

hp_case_exit() {
    local st=$? n_ok n_fail n_skip case=${HP_CASE_FILE##*/}
    case=${case%.sh}
    n_ok=$(grep -c '^ok$' "$HP_CHECKS") n_fail=$(grep -c '^FAIL$' "$HP_CHECKS") n_skip=$(grep -c '^skip$' "$HP_CHECKS")
    [ -n "${HP_OWN_TMP:-}" ] && rm -rf "$TMP" "$HP_CHECKS"
    if [ -z "${HP_CASE_ENDED:-}" ]; then
        echo "FAIL $case: the case stopped before its end (status $st)"
        exit $HP_FAIL
    elif [ "$n_fail" -gt 0 ]; then
        exit $HP_FAIL
    elif [ "$n_ok" = 0 ] && [ "$n_skip" -gt 0 ]; then
        exit $HP_SKIP
    elif [ "$n_ok" = 0 ]; then
        echo "FAIL $case: the case made no check"
        exit $HP_FAIL
    fi
    exit $HP_PASS
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

# preload_ignored ERRFILE: true, printing the loader's line, when a run's stderr says the
# loader left a library of LD_PRELOAD out (the run was then not the one the check is about).
preload_ignored() {
    grep -m1 "from LD_PRELOAD cannot be preloaded" "$1"
}

# excerpt FILE: the first lines of a file on one line, for failure messages.
excerpt() {
    head -c 600 "$1" | head -n 6 | tr '\n' '|' | sed 's/|$//'
}

# ---------------------------------------------------------------------------------------------
# Builds. build OUT CC ARGS...: compiles OUT with `CC ARGS... -o OUT` when OUT is missing or
# older than a file among ARGS, a header of test/profiling or test/progs, the public header or
# the file of the case or script that asks. The compiler's messages go to stderr.
build() {
    local out=$1 cc=$2 a
    shift 2
    mkdir -p "$(dirname "$out")"
    if [ -e "$out" ]; then
        local stale=
        for a in "$@" "$ROOT"/test/profiling/*.h "$ROOT"/test/progs/*.h "$HP_INC/heapprof.h" \
            "${HP_CASE_FILE:-$0}"; do
            [ -f "$a" ] && [ "$a" -nt "$out" ] && stale=1 && break
        done
        [ -n "$stale" ] || return 0
    fi
    # shellcheck disable=SC2086
    $cc "$@" -o "$out"
}

# lib_path NAME: where allocator NAME's library (jemalloc, tcmalloc, mimalloc) is installed;
# lib_of NAME: the same when it is there, else nothing.
lib_path() {
    case $1 in
    jemalloc) echo "$JEMALLOC" ;;
    tcmalloc) echo "$TCMALLOC" ;;
    mimalloc) echo "$MIMALLOC" ;;
    esac
}
lib_of() {
    local f
    f=$(lib_path "$1")
    [ -f "$f" ] && echo "$f"
}

# ---------------------------------------------------------------------------------------------
# Integration: programs run bare and under the shim, outputs compared.
PROG_TIMEOUT=60
REAL_TIMEOUT=120
EXTRA_OPTS="" # more shim options for prog_test (the option passes of prog_checks)

# run_in DIR PRELOAD TIMEOUT CMD...: runs CMD in a fresh DIR/cwd with stdin from /dev/null,
# stdout to DIR/out, stderr to DIR/err and the exit status in DIR/st. PRELOAD is the LD_PRELOAD
# value, empty for a bare run. Profiles go to DIR/prof (and the working directory is scratch,
# so a default output name lands there too, never in the repository). timeout itself runs
# bare: env applies the preload only to CMD.
run_in() {
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
# WHAT names the test run in messages ("under shim", ...).
compare() {
    local name=$1 b=$2 t=$3 what=$4
    local bst tst
    bst=$(cat "$b/st") tst=$(cat "$t/st")
    if [ "$bst" != 0 ]; then
        bad "$name" "bare run failed ($(describe "$bst")), test or environment broken: $(excerpt "$b/out") $(excerpt "$b/err")"
    elif preload_ignored "$t/err" >/dev/null; then
        bad "$name" "$what: $(preload_ignored "$t/err")"
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

# prog_test CC PROG [LABEL]: build CC's PROG bare and under the shim (with $EXTRA_OPTS); the
# check is LABEL/PROG (LABEL defaults to CC).
prog_test() {
    local cc=$1 n=$2 name="${3:-$1}/$2"
    local bin=$PROGS/$cc/$n w=$TMP/${3:-$1}.$n
    have_shim "$name" && have_prog "$name" "$bin" || return 0
    run_in "$w.bare" "" $PROG_TIMEOUT "$bin"
    run_in "$w.shim" "$SHIM" $PROG_TIMEOUT "$bin"
    compare "$name" "$w.bare" "$w.shim" "under shim"
}

# prog_checks PROG: PROG of test/progs bare against the shim for each compiler, then its gcc
# build under the non-default shim configurations (opt-OPTION/PROG; the default is the cfi
# unwinder on the next backend), and its ASan+UBSan build (san/PROG) when build.sh makes one.
prog_checks() {
    local n=$1 cc opts
    for cc in gcc clang; do
        prog_test $cc "$n"
    done
    for opts in unwinder=fp unwinder=libunwind backend=glibc profile=0; do
        EXTRA_OPTS=$opts
        prog_test gcc "$n" "opt-$opts"
    done
    EXTRA_OPTS=""
    case " $(sed -n 's/^SAN_PROGS="\(.*\)"/\1/p' "$ROOT/test/progs/build.sh") " in
    *" $n "*) san_test "$n" ;;
    esac
}

# san_test PROG: the ASan builds can't be preloaded (ASan must come first); they run bare and
# must match the plain build's output.
san_test() {
    local n=$1 name="san/$1"
    local bin=$PROGS/gcc-san/$n w=$TMP/san.$n
    have_prog "$name" "$bin" && have_prog "$name" "$PROGS/gcc/$n" || return 0
    run_in "$w.plain" "" $PROG_TIMEOUT "$PROGS/gcc/$n"
    run_in "$w.san" "" $PROG_TIMEOUT "$bin"
    compare "$name" "$w.plain" "$w.san" "ASan+UBSan build"
}

# preload_test ALLOC LABEL PROG [KIND]: the shim stacked with another malloc replacement, either
# one first. Each combination must behave like a bare run; if the other allocator alone already
# differs, the combination is skipped (not the shim's problem). PROG is a test program name or
# real/SCRIPT (a script of test/integration/real, run with bash). KIND rules: where allocators
# answer differently (t_alignargs: memalign with an alignment of 0 or not a power of two;
# t_zero: realloc(p, 0)), the shim must answer as the allocator under it does without the
# shim: each order is compared with the allocator alone, not with glibc.
preload_test() {
    local alloc=$1 label=$2 prog=$3 kind=${4:-preload} name order
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
        if [ ! -f "$alloc" ]; then
            skip "$name" "$alloc not installed"
            continue
        fi
        have_shim "$name" || continue
        if [ ! -e "$bin" ]; then
            bad "$name" "test program not built: $bin is missing (make progs)"
            continue
        fi
        [ -d "$w.alone" ] || run_in "$w.alone" "$alloc" $PROG_TIMEOUT "${cmd[@]}"
        local ref=$w.alone against=" against $label alone"
        if [ "$kind" = preload ]; then
            [ -d "$w.bare" ] || run_in "$w.bare" "" $PROG_TIMEOUT "${cmd[@]}"
            if [ "$(cat "$w.alone/st")" != "$(cat "$w.bare/st")" ] || ! cmp -s "$w.bare/out" "$w.alone/out"; then
                skip "$name" "$label alone already differs from bare ($(describe "$(cat "$w.alone/st")"))"
                continue
            fi
            ref=$w.bare against=""
        fi
        if [ $order = first ]; then
            run_in "$w.$order" "$alloc $SHIM" $PROG_TIMEOUT "${cmd[@]}"
            compare "$name" "$ref" "$w.$order" "LD_PRELOAD=\"$label shim\"$against"
        else
            run_in "$w.$order" "$SHIM $alloc" $PROG_TIMEOUT "${cmd[@]}"
            compare "$name" "$ref" "$w.$order" "LD_PRELOAD=\"shim $label\"$against"
        fi
    done
}

# preload_checks PROG [KIND]: preload_test PROG with jemalloc, tcmalloc and mimalloc.
preload_checks() {
    preload_test "$JEMALLOC" jemalloc "$@"
    preload_test "$TCMALLOC" tcmalloc "$@"
    preload_test "$MIMALLOC" mimalloc "$@"
}

# real_checks SCRIPT ALLOC...: test/integration/real/SCRIPT.sh run in a scratch directory, bare
# and with the whole process tree preloaded (bash included), then stacked with each ALLOC
# (preload_test). A script prints only deterministic text; one whose first lines say
# "# requires: TOOL..." is skipped when a tool is missing.
real_checks() {
    local base=$1 script=$ROOT/test/integration/real/$1.sh name="real/$1" tool missing="" alloc
    shift
    for tool in $(sed -n '1,3s/^# requires: //p' "$script"); do
        command -v "$tool" >/dev/null 2>&1 || missing="$missing $tool"
    done
    if [ -n "$missing" ]; then
        skip "$name" "not installed:$missing"
    elif have_shim "$name"; then
        run_in "$TMP/real.$base.bare" "" $REAL_TIMEOUT bash "$script"
        run_in "$TMP/real.$base.shim" "$SHIM" $REAL_TIMEOUT bash "$script"
        compare "$name" "$TMP/real.$base.bare" "$TMP/real.$base.shim" "under shim"
    fi
    for alloc in "$@"; do
        preload_test "$(lib_path "$alloc")" "$alloc" "real/$base"
    done
}

# calls_test NAME PATTERN ALLOWED: NAME fails when an instruction of the built library matching
# PATTERN (an awk regex: a call of some functions) is in a function whose name does not match
# ALLOWED (an awk regex of whole names).
calls_test() {
    local name=$1 pattern=$2 allowed=$3 msg
    have_shim "$name" || return 0
    if ! command -v objdump >/dev/null 2>&1; then
        skip "$name" "objdump not found"
        return 0
    fi
    msg=$(objdump -d --no-show-raw-insn "$SHIM" | awk -v pattern="$pattern" -v allowed="^($allowed)\$" '
        /^[0-9a-f]+ <.*>:$/ { fn = $2; gsub(/[<>:]/, "", fn); sub(/\..*/, "", fn); nfn++ }
        $0 ~ pattern && fn !~ allowed { print fn " calls " $NF }
        END { if (!nfn) print "objdump listed no function of the library" }' | sort -u)
    if [ -n "$msg" ]; then
        bad "$name" "$(echo "$msg" | tr '\n' ';')"
    else
        ok "$name"
    fi
}

# ---------------------------------------------------------------------------------------------
# Profiling: test programs with known allocation sites under the shim, their JSON reports'
# numbers checked by test/profiling/check_sites.py.
CHECK_SITES=$ROOT/test/profiling/check_sites.py
run_before="" # libraries preloaded before the shim by run
run_after=""  # and after it (an allocator for it to use)

# check NAME KIND PROFILE [EXTRA...]: report to JSON, compare numbers (check_sites.py KIND).
check() {
    local cname=$1 kind=$2 prof=$3 msg
    shift 3
    if [ ! -f "$prof" ]; then bad "$cname" "no profile $prof"; return; fi
    if ! "$REPORT" --format json -o "$TMP/r.json" "$prof" 2>"$TMP/r.err"; then
        bad "$cname" "heapprof-report failed: $(head -c 300 "$TMP/r.err")"
        return
    fi
    if msg=$(python3 "$CHECK_SITES" "$kind" "$TMP/r.json" "$@" 2>&1); then
        ok "$cname"
    else
        bad "$cname" "$(echo "$msg" | head -5 | tr '\n' ';')"
    fi
}

# dumps_in DIR: how many on-demand dumps (p.PID.hpf.N) DIR holds.
dumps_in() {
    local n=0 f
    for f in "$1"/p.*.hpf.*; do [ -f "$f" ] && n=$((n + 1)); done
    echo "$n"
}

# check_dumps NAME KIND MIN FILE...: every profile FILE passes check KIND, and there are at
# least MIN interval dumps of run NAME.
check_dumps() {
    local cname=$1 kind=$2 min=$3 n fails='' f
    shift 3
    n=$(dumps_in "$TMP/$cname")
    if [ "$n" -lt "$min" ]; then
        bad "$cname" "$n interval dumps, expected at least $min"
        return
    fi
    for f in "$@"; do
        if ! "$REPORT" --format json -o "$TMP/r.json" "$f" 2>"$TMP/r.err" ||
            ! python3 "$CHECK_SITES" "$kind" "$TMP/r.json" >"$TMP/c.out" 2>&1; then
            fails="$fails $(basename "$f"): $(cat "$TMP/r.err" "$TMP/c.out" | head -2 | tr '\n' ' ')"
        fi
    done
    if [ -z "$fails" ]; then ok "$cname"; else bad "$cname" "$fails"; fi
}

# run_status NAME OPTIONS PROGRAM ARGS...: PROGRAM under the shim (with $run_before and
# $run_after around it) with profiles in $TMP/NAME, output in $TMP/NAME.out and .err, its exit
# status in $st.
run_status() {
    local name=$1 opts=$2
    shift 2
    fresh "$name"
    timeout -k 5 120 env HEAPPROF_OPTIONS="output=$TMP/$name/p.%p.hpf:$opts" \
        LD_PRELOAD="${run_before:+$run_before }$SHIM${run_after:+ $run_after}" "$@" >"$TMP/$name.out" 2>"$TMP/$name.err"
    st=$?
}

# run NAME OPTIONS PROGRAM ARGS...: run_status, and a failed status (or a preload the loader
# ignored) is a failed check NAME.
run() {
    run_status "$@"
    if [ $st -ne 0 ]; then
        bad "$1" "exit status $st ($(head -c 300 "$TMP/$1.err"))"
        return 1
    elif preload_ignored "$TMP/$1.err" >/dev/null; then
        bad "$1" "$(preload_ignored "$TMP/$1.err")"
        return 1
    fi
    return 0
}

# run_says NAME OPTIONS LINE PROGRAM ARGS...: run (above), and the program's output must have
# LINE, a line of its own (the program checks itself and prints what it found otherwise).
run_says() {
    local rname=$1 ropts=$2 line=$3
    shift 3
    if run "$rname" "$ropts" "$@"; then
        if grep -qx "$line" "$TMP/$rname.out"; then
            ok "$rname"
        else
            bad "$rname" "$(head -c 300 "$TMP/$rname.out" | tr '\n' ';')"
        fi
    else
        echo "    $(head -c 300 "$TMP/$rname.out" | tr '\n' ';')"
    fi
}

# sites_with NAME PRELOAD OPTIONS BINARY: sites.c's BINARY in its signal mode under
# LD_PRELOAD=PRELOAD, exact numbers at exit.
sites_with() {
    fresh "$1"
    if timeout -k 5 120 env HEAPPROF_OPTIONS="output=$TMP/$1/p.%p.hpf:dump_signal=12:$3" \
        LD_PRELOAD="$2" "$4" signal >/dev/null 2>"$TMP/$1.err"; then
        check "$1" exit "$(first_profile "$TMP/$1")"
    else
        bad "$1" "exit status $?: $(head -c 300 "$TMP/$1.err")"
    fi
}

# killed_result NAME SIG STATUS KIND: the run NAME ended by SIG (a name: TERM, ...; RERAISE,
# RESETHAND and SYSV are killed.c's ways to die of SIGTERM), and its profile passes check KIND
# with the signal's number.
killed_result() {
    local num
    case $2 in HUP) num=1 ;; INT) num=2 ;; ABRT) num=6 ;; SEGV) num=11 ;; TERM | RERAISE | RESETHAND | SYSV) num=15 ;; esac
    if [ "$3" -ne $((128 + num)) ]; then
        bad "$1" "exit status $3, expected $((128 + num)) (SIG$2): $(head -c 300 "$TMP/$1.err")"
    else
        check "$1" "$4" "$(first_profile "$TMP/$1")" $num
    fi
}

# run_refused NAME PATTERN ARGS...: heapprof-run ARGS... must refuse: exit status 2, one line on
# stderr matching PATTERN, the command not run (no profile).
run_refused() {
    local rname=$1 pattern=$2 rc
    shift 2
    rm -f "$TMP"/refused.*
    "$ROOT/scripts/heapprof-run" -q -o "$TMP/refused.%p.hpf" "$@" >/dev/null 2>"$TMP/refused.err"
    rc=$?
    if [ $rc -ne 2 ] || [ "$(wc -l <"$TMP/refused.err")" -ne 1 ] ||
        ! grep -q "^heapprof-run: .*$pattern" "$TMP/refused.err" ||
        ls "$TMP"/refused.*.hpf >/dev/null 2>&1; then
        bad "$rname" "rc=$rc, stderr: $(head -c 300 "$TMP/refused.err"), profiles: $(ls "$TMP" | grep -c '^refused.*hpf')"
    else
        ok "$rname"
    fi
}

# fresh NAME: an empty profile directory $TMP/NAME.
fresh() {
    rm -rf "${TMP:?}/$1"
    mkdir -p "$TMP/$1"
}

# first_profile DIR: the first exit profile (p.PID.hpf) in DIR, or nothing.
first_profile() {
    ls "$1"/p.*.hpf 2>/dev/null | head -1
}

# exit_profile_runs NAME RUNS PROG [OPTIONS]: runs PROG RUNS times under the shim (OPTIONS
# added to HEAPPROF_OPTIONS after the output name), each into a fresh $TMP/NAME; NAME fails
# when a run leaves no complete exit profile (one the report tool reads, dump_reason "exit").
exit_profile_runs() {
    local name=$1 runs=$2 prog=$3 opts=${4:+:$4} missing=0 i f
    for i in $(seq "$runs"); do
        fresh "$name"
        HEAPPROF_OPTIONS="output=$TMP/$name/p.%p.hpf$opts" LD_PRELOAD="$SHIM" \
            timeout -k 5 60 "$prog" 2>/dev/null
        f=$(first_profile "$TMP/$name")
        if [ -z "$f" ] || ! "$REPORT" --format json "$f" 2>/dev/null | grep -q '"dump_reason": "exit"'; then
            missing=$((missing + 1))
        fi
    done
    if [ $missing -eq 0 ]; then
        ok "$name"
    else
        bad "$name" "$missing of $runs runs left no complete exit profile"
    fi
}
