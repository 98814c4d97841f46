# test/integration/real/openssl.sh bare and under the shim, and stacked with jemalloc, either
# one first.
real_checks openssl jemalloc
