# An allocator of the program's with only malloc and free: calloc still works, patched or not.
build "$PBIN/gcc/min_malloc" gcc -O1 -g test/profiling/min_malloc.c
for o in "" ":patch_allocator=0"; do
    name=linked-min${o:+-nopatch}
    if HEAPPROF_OPTIONS="output=$TMP/$name.%p.hpf$o" LD_PRELOAD="$SHIM" "$PBIN/gcc/min_malloc" >"$TMP/$name.out" 2>"$TMP/$name.err" &&
        grep -qx ok "$TMP/$name.out" && ! preload_ignored "$TMP/$name.err"; then
        ok "$name"
    else
        bad "$name" "$(cat "$TMP/$name.out" "$TMP/$name.err" | head -c 300 | tr '\n' ' ')"
    fi
done
