# heapprof-run --backend: the allocator is preloaded after the shim and is its backend, and the
# report names its library.
# timeout: 300
for be in jemalloc tcmalloc mimalloc; do
    name=heapprof-run-backend-$be
    fresh "$name"
    if "$ROOT/scripts/heapprof-run" -q -o "$TMP/$name/p.%p.hpf" --backend $be -- "$PBIN/gcc/sites" >/dev/null 2>"$TMP/$name.err"; then
        f=$(first_profile "$TMP/$name")
        if "$REPORT" "$f" 2>/dev/null | grep -q "backend *next (/.*/lib$be[_a-z]*\.so\.[0-9]*), "; then
            check "$name" exit "$f"
        else
            bad "$name" "backend line: $("$REPORT" "$f" 2>&1 | grep backend)"
        fi
    else
        bad "$name" "exit status $?: $(head -c 300 "$TMP/$name.err")"
    fi
done
