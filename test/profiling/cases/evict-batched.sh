# Evicted records wait in memory and go to the file a thousand at a time: the system calls that
# write them (and check the file and the size limit first) are counted under strace, 12 rounds
# making over 2,000 evictions, so the file is written to before the exit dump too.
name=evict-batched
have_prog "$name" "$PBIN/gcc/evict" || return
fresh "$name"
HEAPPROF_OPTIONS="output=$TMP/$name/p.%p.hpf:hib_table_size=16:hib_table_ways=2:thread_cache_size=16:stack_depth=256" \
    timeout -k 5 120 strace -f -qq -e trace=write,fstat,newfstatat,prlimit64 -o "$TMP/$name.trace" \
    -E LD_PRELOAD="$SHIM" "$PBIN/gcc/evict" "$TMP/$name.own" 12 >"$TMP/$name.out" 2>"$TMP/$name.err"
st=$?
if [ $st -ne 0 ]; then
    bad "$name" "status $st: $(head -c 300 "$TMP/$name.err")"
elif ! "$REPORT" --format json -o "$TMP/$name.json" "$TMP/$name"/p.*.hpf 2>"$TMP/$name.rerr"; then
    bad "$name" "heapprof-report failed: $(head -c 300 "$TMP/$name.rerr")"
else
    evicted=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["summary"]["evicted_hibs"])' "$TMP/$name.json")
    calls=$(wc -l <"$TMP/$name.trace")
    if [ "$evicted" -le 2048 ]; then
        bad "$name" "only $evicted records evicted, expected over 2,048"
    elif [ "$calls" -gt 100 ]; then
        bad "$name" "$calls writes, fstat and prlimit64 calls for $evicted evicted records"
    else
        check "$name" evict "$TMP/$name"/p.*.hpf 12
    fi
fi
