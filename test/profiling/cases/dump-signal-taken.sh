# dump_signal given a handler by the program: the program's handler gets the signal (as bare),
# the shim says once that the signal writes no dumps from then on; before it, one dump.
# timeout: 300
build "$PBIN/gcc/own_handler" gcc -O1 -g test/profiling/own_handler.c
name=dump-signal-taken
fresh "$name"
HEAPPROF_OPTIONS="output=$TMP/$name/p.%p.hpf:dump_signal=USR2" LD_PRELOAD="$SHIM" "$PBIN/gcc/own_handler" >"$TMP/$name.out" 2>"$TMP/$name.err"
st=$?
dumps=$(ls "$TMP/$name" | grep -c '\.hpf\.[0-9]*$')
if [ $st -ne 0 ] || [ "$(cat "$TMP/$name.out")" != "handler got 2, still installed: 1" ]; then
    bad "$name" "status $st, output: $(head -c 200 "$TMP/$name.out")"
elif [ "$(grep -c '^heapprof: the program set its own disposition for SIGUSR2 (dump_signal=12)' "$TMP/$name.err")" != 1 ] ||
    [ "$(grep -c '^heapprof:' "$TMP/$name.err")" != 1 ]; then
    bad "$name" "expected one line from heapprof: $(head -c 300 "$TMP/$name.err")"
elif [ "$dumps" != 1 ]; then
    bad "$name" "$dumps numbered dumps, expected 1 (before the program's handler)"
else
    ok "$name"
fi
