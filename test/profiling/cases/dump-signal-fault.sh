# dump_signal naming a fault's signal is refused in one line, so a crash still ends the process
# with its exit profile and no numbered dumps.

# A dump handler returning from a fault runs again at once: a crashing program wrote dumps for
# ever (16,000 in 5 s).
for sig in SEGV 11; do
    name=dump-signal-fault-$sig
    have_prog "$name" "$PBIN/gcc/killed" || continue
    fresh "$name"
    (ulimit -c 0; exec timeout -s KILL 20 env HEAPPROF_OPTIONS="output=$TMP/$name/p.%p.hpf:dump_signal=$sig" \
        LD_PRELOAD="$SHIM" "$PBIN/gcc/killed" SEGV) >"$TMP/$name.out" 2>"$TMP/$name.err"
    st=$?
    if [ "$(grep -c '^heapprof: option dump_signal=11 (SIGSEGV) is a fault' "$TMP/$name.err")" != 1 ]; then
        bad "$name" "expected one warning: $(head -c 300 "$TMP/$name.err")"
    elif ls "$TMP/$name" | grep -q '\.hpf\.[0-9]'; then
        bad "$name" "$(ls "$TMP/$name" | grep -c '\.hpf\.[0-9]') numbered dumps"
    else
        killed_result "$name" SEGV $st killed_early
    fi
done
