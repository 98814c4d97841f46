# test/progs/t_new_delete.cc: all 20 operator new/delete forms, bad_alloc, nothrow, new_handler,
# errno. Bare against the shim (gcc, clang, gcc under other shim options); and over each other
# allocator (over/*), as the shim defines these whatever allocator is under it.
prog_checks t_new_delete

# With the allocator preloaded after the shim, as its backend, the program must behave as it
# does bare on glibc (the standard's new_handler loop, nullptr from the nothrow forms), even
# where the allocator alone behaves otherwise (mimalloc's nothrow new never calls the handler).
bare=$TMP/over.bare.t_new_delete bin=$PROGS/gcc/t_new_delete
for label in jemalloc tcmalloc mimalloc; do
    name="over/$label/t_new_delete"
    alloc=$(lib_path $label)
    if [ ! -f "$alloc" ]; then
        skip "$name" "$alloc not installed"
        continue
    fi
    have_shim "$name" && have_prog "$name" "$bin" || continue
    [ -d "$bare" ] || run_in "$bare" "" $PROG_TIMEOUT "$bin"
    run_in "$TMP/over.$label" "$SHIM $alloc" $PROG_TIMEOUT "$bin"
    compare "$name" "$bare" "$TMP/over.$label" "LD_PRELOAD=\"shim $label\""
done
