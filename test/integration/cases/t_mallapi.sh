# test/progs/t_mallapi.c: mallopt, mallinfo2, malloc_trim, malloc_info and the __libc_* aliases.
# Bare against the shim (gcc, clang, gcc under other shim options).
prog_checks t_mallapi
