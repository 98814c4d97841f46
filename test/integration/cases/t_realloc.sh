# test/progs/t_realloc.c: realloc, malloc(0) and calloc edge cases, contents kept by realloc.
# Bare against the shim (gcc, clang, gcc under other shim options); stacked with each other
# allocator, either one first.
prog_checks t_realloc
preload_checks t_realloc
