# timeout: 300
# Access profiling (issue 41), test/access/patterns.c and its library built by heapprof-cc with
# clang-16's inline counters (HEAPPROF_CC=clang-16; skipped when not installed): the binary runs
# without the shim with the plain build's output, and under heapprof-run the report's per-site
# counts, writes, utilisation and histograms equal patterns.expected.
. "$ROOT/test/access/e2e_lib.sh"
if ! command -v clang-16 >/dev/null 2>&1; then
    skip patterns-clang16 "clang-16 is not installed"
    return
fi
access_patterns_check clang16
