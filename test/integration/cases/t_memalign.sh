# test/progs/t_memalign.c: posix_memalign, memalign, aligned_alloc, valloc and pvalloc over many
# alignments. Bare against the shim (gcc, clang, gcc under other shim options).
prog_checks t_memalign
