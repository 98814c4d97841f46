# test/integration/real/bash.sh bare and under the shim, and stacked with jemalloc, either
# one first.
real_checks bash jemalloc
