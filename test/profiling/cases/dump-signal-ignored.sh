# dump_signal on a signal the process inherited ignored (nohup's SIGHUP): it stays ignored, as
# the program and what it execs would have it, said once (a handler is not inherited across
# exec: the shim's made a nohup'ed program's children die of SIGHUP).
# timeout: 300
build "$PBIN/gcc/ignored_sig" gcc -O1 -g test/profiling/ignored_sig.c
name=dump-signal-ignored
fresh "$name"
sh -c 'trap "" HUP; exec "$@"' sh env HEAPPROF_OPTIONS="output=$TMP/$name/p.%p.hpf:dump_signal=HUP" \
    LD_PRELOAD="$SHIM" "$PBIN/gcc/ignored_sig" >"$TMP/$name.out" 2>"$TMP/$name.err"
st=$?
if [ $st -ne 0 ] || [ "$(tr '\n' ' ' <"$TMP/$name.out")" != "HUP ignored: 1 alive " ]; then
    bad "$name" "status $st, output: $(head -c 200 "$TMP/$name.out")"
elif [ "$(grep -c '^heapprof:' "$TMP/$name.err")" != 1 ] ||
    ! grep -q '^heapprof: dump_signal=1: SIGHUP is ignored in this process (inherited)' "$TMP/$name.err"; then
    bad "$name" "expected one line from heapprof: $(head -c 300 "$TMP/$name.err")"
elif ! "$REPORT" "$(first_profile "$TMP/$name")" >/dev/null 2>"$TMP/r.err"; then
    bad "$name" "no readable exit profile: $(head -c 200 "$TMP/r.err")"
else
    ok "$name"
fi
