# test/progs/t_foreign.c: free, realloc and malloc_usable_size of blocks from __libc_malloc.
# Bare against the shim (gcc, clang, gcc under other shim options).
prog_checks t_foreign
