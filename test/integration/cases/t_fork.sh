# test/progs/t_fork.c: fork while threads allocate; the child allocates, starts a thread, exits
# 0. Bare against the shim (gcc, clang, gcc under other shim options); stacked with each other
# allocator, either one first.
prog_checks t_fork
preload_checks t_fork
