#!/bin/bash
# Access profiling end to end, standalone (the test runner's cases call the same functions of
# e2e_lib.sh): patterns.c in every heapprof-cc mode, the MemProf cross-check with clang 14 (and
# clang-16 when installed), and a real program (Lua). Run from the top of the tree after make.
# Usage: test/access/e2e.sh [patterns|crosscheck|real]...   Ends with "N passed, N failed".
set -u
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
BUILD=$ROOT/build
REPORT=$BUILD/heapprof-report-san
[ -x "$REPORT" ] || REPORT=$BUILD/heapprof-report
TMP=$(mktemp -d /tmp/heapprof-access.XXXXXX)
trap 'rm -rf "$TMP"' EXIT
pass=0 fail=0
ok() { echo "ok $1"; pass=$((pass + 1)); }
bad() { echo "FAIL $1: $2"; fail=$((fail + 1)); }
skip() { echo "skip $1: $2"; }
. "$ROOT/test/access/e2e_lib.sh"
[ $# -gt 0 ] || set -- patterns crosscheck real
for what; do
    case $what in
    patterns) for m in $(access_modes); do access_patterns_check "$m"; done ;;
    crosscheck)
        access_crosscheck clang
        command -v clang-16 >/dev/null 2>&1 && access_crosscheck clang-16 ;;
    real) access_real ;;
    *) echo "e2e.sh: unknown part $what" >&2; exit 2 ;;
    esac
done
echo "$pass passed, $fail failed"
[ $fail = 0 ]
