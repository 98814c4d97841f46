# python3 with every object a malloc (thousands of deep stacks, coming back over and over): the
# default unwinder, with its walk and site caches, attributes every allocation to the same stack
# as libunwind, which walks each one afresh (up to the few allocations only one of them makes).
export PYTHONMALLOC=malloc PYTHONHASHSEED=0
for unw in cfi libunwind; do
    if run "python3-$unw" "unwinder=$unw" /usr/bin/python3 "$ROOT/bench/py_workload.py" 2; then
        "$REPORT" --format json -o "$TMP/python3-$unw.json" "$(first_profile "$TMP/python3-$unw")" \
            2>"$TMP/python3-$unw.rerr" || bad "python3-$unw" "heapprof-report failed: $(head -c 300 "$TMP/python3-$unw.rerr")"
    fi
done
unset PYTHONMALLOC PYTHONHASHSEED
if [ -s "$TMP/python3-cfi.json" ] && [ -s "$TMP/python3-libunwind.json" ]; then
    if msg=$(python3 "$CHECK_SITES" agree "$TMP/python3-cfi.json" "$TMP/python3-libunwind.json" 4 2>&1); then
        ok python3-cfi-agrees-with-libunwind
    else
        bad python3-cfi-agrees-with-libunwind "$(echo "$msg" | head -3 | tr '\n' ';')"
    fi
fi
