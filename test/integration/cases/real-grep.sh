# test/integration/real/grep.sh bare and under the shim, and stacked with jemalloc, either
# one first.
real_checks grep jemalloc
