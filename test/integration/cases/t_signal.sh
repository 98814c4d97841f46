# test/progs/t_signal.c: SIGALRM and SIGUSR1 handlers that allocate and free. Bare against the
# shim (gcc, clang, gcc under other shim options).
prog_checks t_signal
