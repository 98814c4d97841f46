# The exit profile waits for an interval dump in progress instead of being skipped: ten runs,
# every one leaves a complete exit profile.
build "$PBIN/gcc/exit_race" gcc -O1 -g test/profiling/exit_race.c
name=exit-race
missing=0
for i in 1 2 3 4 5 6 7 8 9 10; do
    fresh "$name"
    HEAPPROF_OPTIONS="output=$TMP/$name/p.%p.hpf:dump_interval_ms=1" LD_PRELOAD="$SHIM" \
        timeout -k 5 60 "$PBIN/gcc/exit_race" 2>/dev/null
    f=$(first_profile "$TMP/$name")
    if [ -z "$f" ] || ! "$REPORT" --format json "$f" 2>/dev/null | grep -q '"dump_reason": "exit"'; then
        missing=$((missing + 1))
    fi
done
if [ $missing -eq 0 ]; then ok "$name"; else bad "$name" "$missing of 10 runs left no complete exit profile"; fi
