# test/integration/real/python3_pymalloc_off.sh bare and under the shim, and stacked with each other
# allocator, either one first.
real_checks python3_pymalloc_off jemalloc tcmalloc mimalloc
