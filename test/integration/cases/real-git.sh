# test/integration/real/git.sh bare and under the shim, and stacked with each other
# allocator, either one first.
real_checks git jemalloc tcmalloc mimalloc
