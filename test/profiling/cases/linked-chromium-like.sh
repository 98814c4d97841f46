# An allocator the program also calls past its entry points (Chromium's allocator shim): left
# alone, with a message, and the program runs as without the shim.
build "$PBIN/gcc/chromium_like" gcc -O1 -g -rdynamic test/profiling/chromium_like.c
name=linked-chromium-like
if HEAPPROF_OPTIONS="output=$TMP/$name.%p.hpf" LD_PRELOAD="$SHIM" "$PBIN/gcc/chromium_like" >"$TMP/$name.out" 2>"$TMP/$name.err" &&
    grep -qx ok "$TMP/$name.out" && grep -q "Chromium's allocator shim" "$TMP/$name.err"; then
    ok "$name"
else
    bad "$name" "$(cat "$TMP/$name.out" "$TMP/$name.err" | head -c 300 | tr '\n' ' ')"
fi
