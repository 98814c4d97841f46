# patch_allocator=0: the shim says why it records nothing, and the program runs as before (the
# wrapping one too: its calls of __libc_malloc reach glibc, not the shim and back).
for al in own wrap; do
    name=linked-nopatch-$al
    have_prog "$name" "$PBIN/gcc/sites-$al" || continue
    fresh "$name"
    timeout -k 5 60 env HEAPPROF_OPTIONS="output=$TMP/$name/p.%p.hpf:patch_allocator=0" LD_PRELOAD="$SHIM" \
        "$PBIN/gcc/sites-$al" >/dev/null 2>"$TMP/$name.err"
    st=$?
    if [ $st -ne 0 ] || ! grep -q "not patched (patch_allocator=0)" "$TMP/$name.err" || [ -n "$(ls "$TMP/$name")" ]; then
        bad "$name" "status $st, files: $(ls "$TMP/$name" | tr '\n' ' '); stderr: $(head -c 300 "$TMP/$name.err")"
    else
        ok "$name"
    fi
done
