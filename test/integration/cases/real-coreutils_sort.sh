# test/integration/real/coreutils_sort.sh bare and under the shim, and stacked with jemalloc, either
# one first.
real_checks coreutils_sort jemalloc
