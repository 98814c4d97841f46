# test/integration/real/make.sh bare and under the shim, and stacked with jemalloc, either
# one first.
real_checks make jemalloc
