# test/progs/t_overflow.c: sizes near SIZE_MAX and PTRDIFF_MAX: NULL and ENOMEM, the old block
# untouched. Bare against the shim (gcc, clang, gcc under other shim options).
prog_checks t_overflow
