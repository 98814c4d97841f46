# test/progs/t_tsd_alloc.c: thread-specific-data destructors allocating deep after the thread's
# cache is gone. Bare against the shim (gcc, clang, gcc under other shim options).
prog_checks t_tsd_alloc
