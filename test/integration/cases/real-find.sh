# test/integration/real/find.sh bare and under the shim, and stacked with jemalloc, either
# one first.
real_checks find jemalloc
