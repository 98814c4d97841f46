# timeout: 900
# Access profiling of a real C program built from its own sources (issue 41): Lua 5.4 from
# Debian's source package, `make linux CC=heapprof-cc`, running test/access/workload.lua: the
# same output as the plain build, bare and under heapprof-run, and accesses at its hot sites.
# Skipped when the sources cannot be fetched (test/access/debian_source.sh).
. "$ROOT/test/access/e2e_lib.sh"
access_real
