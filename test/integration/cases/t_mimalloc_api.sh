# test/progs/t_mimalloc_api.c: linked with libmimalloc: its mi_* API crossed with malloc/free,
# heaps. Bare against the shim (gcc, clang, gcc under other shim options); with mimalloc
# preloaded before the shim (patched) and after it (as linked).
prog_checks t_mimalloc_api
preload_test "$MIMALLOC" mimalloc t_mimalloc_api
