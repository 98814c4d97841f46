# test/progs/t_dlopen.c: plugins allocating across the boundary, load/unload cycles,
# RTLD_DEEPBIND, lookups through the program's RUNPATH and $ORIGIN. Bare against the shim (gcc,
# clang, gcc under other shim options).
prog_checks t_dlopen
