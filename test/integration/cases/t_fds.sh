# test/progs/t_fds.c: children that close every descriptor and open their own files, or run out
# of them. Bare against the shim (gcc, clang, gcc under other shim options).
prog_checks t_fds
