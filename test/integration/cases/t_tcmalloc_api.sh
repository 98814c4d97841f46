# test/progs/t_tcmalloc_api.cc: linked with tcmalloc: every tc_* function, crossed with
# malloc/free and new/delete. Bare against the shim (gcc, clang, gcc under other shim options).
prog_checks t_tcmalloc_api
