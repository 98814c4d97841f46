# test/progs/t_jemalloc_api.c: linked with jemalloc: its *allocx API with every flag, crossed
# with malloc/free. Bare against the shim (gcc, clang, gcc under other shim options).
prog_checks t_jemalloc_api
