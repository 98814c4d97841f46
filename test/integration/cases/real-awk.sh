# test/integration/real/awk.sh bare and under the shim, and stacked with jemalloc, either
# one first.
real_checks awk jemalloc
