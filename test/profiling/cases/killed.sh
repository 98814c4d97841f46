# Ended by a signal from outside (busy in the allocator when it comes, often): the profile is
# written, and the process still dies of that signal. Each signal twice.
# timeout: 300
for sig in TERM INT HUP TERM INT HUP; do
    name=killed-$sig
    have_prog "$name" "$PBIN/gcc/killed" || continue
    fresh "$name"
    HEAPPROF_OPTIONS="output=$TMP/$name/p.%p.hpf" LD_PRELOAD="$SHIM" "$PBIN/gcc/killed" $sig >"$TMP/$name.out" 2>"$TMP/$name.err" &
    pid=$!
    for i in $(seq 100); do
        grep -q ready "$TMP/$name.out" 2>/dev/null && break
        sleep 0.05
    done
    sleep 0.05
    kill -$sig $pid
    wait $pid
    killed_result "$name" $sig $? killed
done
