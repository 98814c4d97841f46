#!/bin/bash
# Runs heapprof's test cases one at a time, each with a time limit and a scratch directory of
# its own, and says pass, skip or fail per case, then "N passed, N failed, N skipped".
# Usage: test/run.sh [-s SUITE]... [-l] [-k] [PATTERN...]       (see test/README)
[ -n "${BASH_VERSION:-}" ] || exec bash "$0" "$@"
set -u
cd "$(dirname "$0")/.." || exit 2

usage() {
    cat <<'EOF'
usage: test/run.sh [-s SUITE]... [-l] [-k] [PATTERN...]
  Cases: unit/NAME (the Check suites: $HEAPPROF_UNIT_BINS, or build/unit/test_* and
  build/runit/test_*), integration/NAME and profiling/NAME (test/SUITE/cases/NAME.sh).
  PATTERN: a glob (with * ? [) matched against SUITE/NAME or NAME, else a substring of
  SUITE/NAME; a case runs when it matches any PATTERN (every case when none is given).
  -s SUITE  only the cases of SUITE (unit, integration, profiling); may be repeated
  -l        list the cases that would run, run nothing
  -k        keep each case's scratch directory (printed)
  HEAPPROF_CASE_TIMEOUT: seconds a case may take when its file does not say (1800);
  a case file sets its own in a first-lines comment "# timeout: SECONDS".
EOF
}

suites=() patterns=() list=0 keep=0
while [ $# -gt 0 ]; do
    case $1 in
    -s) [ $# -ge 2 ] || { usage >&2; exit 2; }; suites+=("$2"); shift ;;
    -l) list=1 ;;
    -k) keep=1 ;;
    -h | --help) usage; exit 0 ;;
    -*) usage >&2; exit 2 ;;
    *) patterns+=("$1") ;;
    esac
    shift
done
[ ${#suites[@]} -gt 0 ] || suites=(unit integration profiling)

# Run from make, the environment carries make's job-server and level settings; programs the
# cases run must not inherit them (make.sh would print "Entering directory").
unset MAKEFLAGS MFLAGS MAKELEVEL MAKEOVERRIDES
ulimit -c 0 # some cases abort or crash on purpose; no core files in the tree

# wanted SUITE/NAME: true when it matches a PATTERN (or there are none).
wanted() {
    local full=$1 p
    [ ${#patterns[@]} = 0 ] && return 0
    for p in "${patterns[@]}"; do
        case $p in
        *[*?[]*)
            # shellcheck disable=SC2053
            [[ $full == $p || ${full#*/} == $p ]] && return 0 ;;
        *) [[ $full == *"$p"* ]] && return 0 ;;
        esac
    done
    return 1
}

# cases SUITE: "NAME PATH" per case of SUITE, in order.
cases() {
    local f
    if [ "$1" = unit ]; then
        # shellcheck disable=SC2086
        for f in ${HEAPPROF_UNIT_BINS:-build/unit/test_* build/runit/test_*}; do
            [ -x "$f" ] && [ -f "$f" ] && echo "${f##*/} $f"
        done
    else
        for f in test/"$1"/cases/*.sh; do
            [ -f "$f" ] || continue
            f=${f##*/}
            echo "${f%.sh} test/$1/cases/$f"
        done
    fi
}

TMPROOT=$(mktemp -d /tmp/heapprof-test.XXXXXX) || exit 2
[ $keep = 1 ] || trap 'rm -rf "$TMPROOT"' EXIT

n_pass=0 n_fail=0 n_skip=0 c_ok=0 c_fail=0 c_skip=0
failures=()

# run_case SUITE NAME PATH: runs one case and says its verdict.
run_case() {
    local full=$1/$2 path=$3 dir log limit st t0 secs verdict reason ok fail skp
    dir=$TMPROOT/${full//\//.}
    log=$dir.log
    mkdir -p "$dir"
    limit=${HEAPPROF_CASE_TIMEOUT:-1800}
    if [ "$1" != unit ]; then
        limit=$(sed -n '1,5s/^# timeout: \([0-9][0-9]*\)$/\1/p' "$path" | head -1)
        limit=${limit:-${HEAPPROF_CASE_TIMEOUT:-1800}}
    fi
    t0=$(date +%s)
    # Stdout is shown as it comes; stderr is kept for the verdict. The case's own process
    # group is killed at the time limit (timeout signals its whole group).
    if [ "$1" = unit ]; then
        CK_FORK=yes timeout -k 10 "$limit" "$path" </dev/null 2>"$log.err" | tee "$log"
    else
        # shellcheck disable=SC2016
        HP_CASE_TMP=$dir timeout -k 10 "$limit" bash -c '. test/lib.sh && hp_case_run "$1"' case "$path" \
            </dev/null 2>"$log.err" | tee "$log"
    fi
    st=${PIPESTATUS[0]}
    secs=$(($(date +%s) - t0))
    ok=$(grep -c '^ok ' "$log") fail=$(grep -c '^FAIL ' "$log") skp=$(grep -c '^skip ' "$log")
    c_ok=$((c_ok + ok)) c_fail=$((c_fail + fail)) c_skip=$((c_skip + skp))
    reason=""
    if [ "$st" = 124 ] || [ "$st" = 137 ]; then
        verdict=FAIL reason="timed out after $limit s"
    elif [ "$1" = unit ]; then
        if [ "$st" = 0 ]; then verdict=PASS; else verdict=FAIL reason="status $st"; fi
    elif [ "$st" = 0 ] && [ "$fail" = 0 ]; then
        verdict=PASS
    elif [ "$st" = 1 ] && [ "$fail" = 0 ]; then
        verdict=SKIP reason=$(sed -n 's/^skip //p' "$log" | head -3 | tr '\n' ';' | sed 's/;$//')
    elif [ "$fail" -gt 0 ]; then
        verdict=FAIL reason="$fail of $((ok + fail + skp)) checks failed: $(grep -m3 '^FAIL ' "$log" | tr '\n' ';' | sed 's/;$//')"
    else
        verdict=FAIL reason="status $st"
    fi
    if [ $verdict = FAIL ] && [ -s "$log.err" ]; then
        reason="$reason; stderr: $(tail -n 5 "$log.err" | tr '\n' '|' | head -c 600)"
    fi
    case $verdict in
    PASS)
        n_pass=$((n_pass + 1))
        # A unit suite counts its own tests (Check's "N%: Checks: N, ...").
        [ "$1" = unit ] && ok="$(sed -n 's/.*Checks: \([0-9]*\),.*/\1/p' "$log" | head -1) Check tests" || ok="$ok checks"
        echo "-- PASS $full ($ok, $secs s)" ;;
    SKIP) n_skip=$((n_skip + 1)); echo "-- SKIP $full: $reason" ;;
    FAIL) n_fail=$((n_fail + 1)); failures+=("$full: $reason"); echo "-- FAIL $full: $reason ($secs s)" ;;
    esac
    if [ $keep = 1 ]; then
        echo "   scratch: $dir, output: $log"
    else
        rm -rf "$dir" "$dir.checks"
    fi
}

for suite in "${suites[@]}"; do
    case $suite in
    unit | integration | profiling) ;;
    *) echo "test/run.sh: no suite '$suite' (unit, integration, profiling)" >&2; exit 2 ;;
    esac
    while read -r name path; do
        wanted "$suite/$name" || continue
        if [ $list = 1 ]; then echo "$suite/$name"; else run_case "$suite" "$name" "$path"; fi
    done < <(cases "$suite")
done
[ $list = 1 ] && exit 0
[ $((n_pass + n_fail + n_skip)) -gt 0 ] || echo "test/run.sh: no case matches ${patterns[*]}" >&2

if [ ${#failures[@]} -gt 0 ]; then
    echo "failed cases:"
    printf '  %s\n' "${failures[@]}"
fi
echo "checks: $c_ok ok, $c_fail failed, $c_skip skipped"
echo "$n_pass passed, $n_fail failed, $n_skip skipped"
[ $n_fail = 0 ] && [ $((n_pass + n_skip)) -gt 0 ]
