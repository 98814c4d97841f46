# test/progs/t_exec.c: vfork+exec, posix_spawn, system() and exec of itself. Bare against the
# shim (gcc, clang, gcc under other shim options).
prog_checks t_exec
