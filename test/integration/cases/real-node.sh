# test/integration/real/node.sh bare and under the shim, and stacked with jemalloc, either
# one first.
real_checks node jemalloc
