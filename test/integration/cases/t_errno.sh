# test/progs/t_errno.c: free keeps errno. Bare against the shim (gcc, clang, gcc under other
# shim options).
prog_checks t_errno
