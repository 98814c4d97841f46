# test/integration/real/signals.sh bare and under the shim, and stacked with jemalloc, either
# one first.
real_checks signals jemalloc
