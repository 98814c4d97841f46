# test/integration/real/python3.sh bare and under the shim, and stacked with jemalloc, either
# one first.
real_checks python3 jemalloc
