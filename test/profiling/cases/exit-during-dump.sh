# A thread that calls _exit while the main thread's exit is writing the final profile waits for
# it (a few seconds at most) instead of ending the process under it: five runs, every one leaves
# a complete exit profile.
# timeout: 300
build "$PBIN/gcc/exit_during_dump" gcc -O1 -g -pthread -fno-omit-frame-pointer test/profiling/exit_during_dump.c
name=exit-during-dump
missing=0
for i in 1 2 3 4 5; do
    fresh "$name"
    HEAPPROF_OPTIONS="output=$TMP/$name/p.%p.hpf" LD_PRELOAD="$SHIM" \
        timeout -k 5 60 "$PBIN/gcc/exit_during_dump" 2>/dev/null
    f=$(first_profile "$TMP/$name")
    if [ -z "$f" ] || ! "$REPORT" --format json "$f" 2>/dev/null | grep -q '"dump_reason": "exit"'; then
        missing=$((missing + 1))
    fi
done
if [ $missing -eq 0 ]; then ok "$name"; else bad "$name" "$missing of 5 runs left no complete exit profile"; fi
