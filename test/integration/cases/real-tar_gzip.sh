# test/integration/real/tar_gzip.sh bare and under the shim, and stacked with jemalloc, either
# one first.
real_checks tar_gzip jemalloc
