# test/progs/t_usable.c: alignment and malloc_usable_size over many sizes. Bare against the shim
# (gcc, clang, gcc under other shim options).
prog_checks t_usable
