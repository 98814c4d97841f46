# heapprof-run puts glibc's malloc debugging library in front of the shim, where it works,
# whatever the user's LD_PRELOAD order (it keeps the rest of that order after the shim).
name=malloc-debug-heapprof-run
fresh "$name"
if MALLOC_CHECK_=3 LD_PRELOAD="$MALLOC_DEBUG" "$ROOT/scripts/heapprof-run" -q \
    -o "$TMP/$name/p.%p.hpf" "$PBIN/gcc/sites" >/dev/null 2>"$TMP/$name.err"; then
    f=$(first_profile "$TMP/$name")
    if "$REPORT" "$f" 2>/dev/null | grep -q "backend *patched" && ! grep -q . "$TMP/$name.err"; then
        check "$name" exit "$f"
    else
        bad "$name" "backend: $("$REPORT" "$f" 2>&1 | grep backend); stderr: $(head -c 200 "$TMP/$name.err")"
    fi
else
    bad "$name" "exit status $?: $(head -c 300 "$TMP/$name.err")"
fi
