# test/progs/t_sigdisp.c: dispositions of the signals the shim takes over, own handlers,
# children ended by signals. Bare against the shim (gcc, clang, gcc under other shim options).
prog_checks t_sigdisp
