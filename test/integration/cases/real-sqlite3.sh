# test/integration/real/sqlite3.sh bare and under the shim, and stacked with jemalloc, either
# one first.
real_checks sqlite3 jemalloc
