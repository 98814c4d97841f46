# busy_dumps.c's four threads ended by SIGTERM: the profile written on the way down is one
# moment too (the three other threads keep allocating while the signal's thread writes it).
# timeout: 300
name=busy-killed
have_prog "$name" "$PBIN/gcc/busy_dumps" || return
fresh "$name"
HEAPPROF_OPTIONS="output=$TMP/$name/p.%p.hpf:peak_slack_kb=1" LD_PRELOAD="$SHIM" "$PBIN/gcc/busy_dumps" >"$TMP/$name.out" 2>"$TMP/$name.err" &
pid=$!
sleep 0.5
kill -TERM $pid
wait $pid
st=$?
f=$(first_profile "$TMP/$name")
if [ $st -ne 143 ]; then
    bad "$name" "exit status $st, expected 143 (SIGTERM): $(head -c 300 "$TMP/$name.err")"
elif [ -z "$f" ]; then
    bad "$name" "no profile"
else
    check "$name" consistent "$f"
fi
