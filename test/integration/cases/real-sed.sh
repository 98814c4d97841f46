# test/integration/real/sed.sh bare and under the shim, and stacked with jemalloc, either
# one first.
real_checks sed jemalloc
