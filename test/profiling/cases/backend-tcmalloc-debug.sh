# The shim asks its backend about an alignment only when the program passes one that is not a
# power of two: a debugging allocator that aborts on such (gperftools' tcmalloc_minimal_debug)
# runs a program that never does to its end.
name=backend-tcmalloc-debug
run_after=/usr/lib/x86_64-linux-gnu/libtcmalloc_minimal_debug.so.4
if run "$name" "" "$PBIN/gcc/sites"; then
    check "$name" exit "$(first_profile "$TMP/$name")"
fi
run_after=""
