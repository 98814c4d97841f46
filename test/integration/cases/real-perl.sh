# test/integration/real/perl.sh bare and under the shim, and stacked with jemalloc, either
# one first.
real_checks perl jemalloc
