# test/progs/t_smallstack.c: allocation on a SIGSTKSZ alternate stack and in PTHREAD_STACK_MIN
# threads. Bare against the shim (gcc, clang, gcc under other shim options).
prog_checks t_smallstack
