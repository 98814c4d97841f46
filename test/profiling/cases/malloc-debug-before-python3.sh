# glibc's malloc debugging library with MALLOC_CHECK_ before the shim, under python3: a non-PIE
# program that takes malloc's address (its PLT entry stands for malloc), so the library must be
# patched, not that entry. Every allocation counted, no foreign or double frees.
name=malloc-debug-before-python3
fresh "$name"
if MALLOC_CHECK_=3 PYTHONMALLOC=malloc HEAPPROF_OPTIONS="output=$TMP/$name/p.%p.hpf" \
    LD_PRELOAD="$MALLOC_DEBUG $SHIM" \
    /usr/bin/python3 -c 'import sys; x = [str(i) * 3 for i in range(100000)]; sys.exit(0 if len(x) == 100000 else 1)' \
    2>"$TMP/$name.err" && "$REPORT" -f json -o "$TMP/$name.json" "$TMP/$name"/p.*.hpf 2>>"$TMP/$name.err"; then
    if python3 -c 'import json, sys; s = json.load(open(sys.argv[1]))["summary"]
sys.exit(0 if s["total_allocs"] >= 100000 and s["foreign_frees"] == 0 and s["double_frees"] == 0 else 1)' "$TMP/$name.json"; then
        ok "$name"
    else
        bad "$name" "summary: $(python3 -c 'import json, sys; print(json.load(open(sys.argv[1]))["summary"])' "$TMP/$name.json" | head -c 300)"
    fi
else
    bad "$name" "$(head -c 300 "$TMP/$name.err")"
fi
