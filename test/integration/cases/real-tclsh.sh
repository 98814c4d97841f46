# test/integration/real/tclsh.sh bare and under the shim, and stacked with jemalloc, either
# one first.
real_checks tclsh jemalloc
