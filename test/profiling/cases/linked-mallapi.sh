# The tuning and statistics calls a linked-in allocator lacks still reach glibc's, as without
# the shim (tcmalloc has no malloc_info; test/progs/t_mallapi.c checks they all answer).
name=linked-mallapi-tcmalloc
if ! build "$PBIN/gcc/t_mallapi-tcmalloc" gcc -O1 -g -pthread -Itest/progs test/progs/t_mallapi.c \
    -Wl,-Bstatic -ltcmalloc_minimal -Wl,-Bdynamic -lstdc++ -lm; then
    bad "$name" "cannot build t_mallapi.c with tcmalloc"
    return
fi
"$PBIN/gcc/t_mallapi-tcmalloc" >"$TMP/$name.bare" 2>&1
bst=$?
HEAPPROF_OPTIONS="output=$TMP/$name.%p.hpf" LD_PRELOAD="$SHIM" "$PBIN/gcc/t_mallapi-tcmalloc" >"$TMP/$name.shim" 2>&1
sst=$?
if [ $bst -ne $sst ] || ! cmp -s "$TMP/$name.bare" "$TMP/$name.shim"; then
    bad "$name" "bare status $bst, shim $sst: $(diff "$TMP/$name.bare" "$TMP/$name.shim" | head -c 300 | tr '\n' ' ')"
else
    ok "$name"
fi
