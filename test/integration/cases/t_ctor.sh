# test/progs/t_ctor.c: allocation in constructors, freed in main. Bare against the shim (gcc,
# clang, gcc under other shim options).
prog_checks t_ctor
