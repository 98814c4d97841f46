# test/integration/real/xz.sh bare and under the shim, and stacked with jemalloc, either
# one first.
real_checks xz jemalloc
