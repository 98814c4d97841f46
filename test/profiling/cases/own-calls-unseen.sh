# A library preloaded before the shim that interposes pthread_create and sigaction (a tracer, a
# sanitizer's runtime) sees the program's calls only: the shim's interval thread and its dump
# signal's handler are made through libc's own functions, not through the first definition.
# timeout: 120
name=own-calls-unseen
build "$PBIN/gcc/spy_preload.so" gcc -O1 -g -shared -fPIC test/profiling/spy_preload.c -ldl
build "$PBIN/gcc/spy_program" gcc -O1 -g -pthread test/profiling/spy_program.c
fresh "$name"
out=$TMP/$name/spy.txt
SPY_OUT=$out HEAPPROF_OPTIONS="output=$TMP/$name/p.%p.hpf:dump_interval_ms=5:dump_signal=USR2" \
    LD_PRELOAD="$PBIN/gcc/spy_preload.so $SHIM" "$PBIN/gcc/spy_program" >"$TMP/$name.out" 2>"$TMP/$name.err"
st=$?
dumps=$(ls "$TMP/$name" | grep -c '\.hpf\.[0-9]*$')
if [ $st -ne 0 ] || [ "$(cat "$TMP/$name.out")" != done ]; then
    bad "$name" "status $st, output: $(head -c 200 "$TMP/$name.out") $(head -c 200 "$TMP/$name.err")"
elif [ "$(cat "$out" 2>/dev/null)" != "pthread_create 1 sigaction 1" ]; then
    bad "$name" "the preloaded library counted: $(cat "$out" 2>/dev/null), expected the program's 1 and 1"
elif [ "$dumps" -lt 1 ]; then
    bad "$name" "no interval dump: the shim's thread did not run"
elif ! "$REPORT" "$TMP/$name"/p.*.hpf >/dev/null 2>"$TMP/$name.rep"; then
    bad "$name" "the exit profile does not read: $(head -c 200 "$TMP/$name.rep")"
else
    ok "$name"
fi
