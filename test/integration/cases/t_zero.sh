# test/progs/t_zero.c: zero-sized requests (malloc(0), realloc(p, 0), ...), outcomes printed.
# Bare against the shim (gcc, clang, gcc under other shim options); stacked with each other
# allocator, answering as that allocator does alone (rules/*).
prog_checks t_zero
preload_checks t_zero rules
