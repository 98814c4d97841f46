# test/progs/t_getattr.c: threads whose first call is pthread_getattr_np, which allocates under
# a lock. Bare against the shim (gcc, clang, gcc under other shim options).
prog_checks t_getattr
