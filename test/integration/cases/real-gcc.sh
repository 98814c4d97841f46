# test/integration/real/gcc.sh bare and under the shim, and stacked with jemalloc, either
# one first.
real_checks gcc jemalloc
