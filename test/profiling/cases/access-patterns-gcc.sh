# timeout: 300
# Access profiling (issue 41), test/access/patterns.c and its library built by heapprof-cc with
# gcc's ThreadSanitizer callbacks (HEAPPROF_CC=gcc: reads and writes apart, memset uncounted): the binary
# runs without the shim with the plain build's output, and under heapprof-run the report's
# per-site counts, writes, utilisation and histograms equal patterns.expected.
. "$ROOT/test/access/e2e_lib.sh"
access_patterns_check gcc
