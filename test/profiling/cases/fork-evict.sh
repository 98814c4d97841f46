# Forks while other threads evict HIB records into the spool: no deadlock (timeout -k: a hung
# shim would not even end on SIGTERM); every child's profile and every interval dump reads the
# spool back, and holds as many records as its END counts.
build "$PBIN/gcc/fork_evict" gcc -O1 -g -fno-omit-frame-pointer -pthread test/profiling/fork_evict.c
name=fork-evict
run_status "$name" "hib_table_size=16:hib_table_ways=2:dump_interval_ms=200" "$PBIN/gcc/fork_evict" 200
if [ $st != 0 ] || [ "$(cat "$TMP/$name.out")" != done ]; then
    bad "$name" "exit status $st (124/137: it hung), $(head -c 300 "$TMP/$name.err")"
elif [ "$(ls "$TMP/$name" | grep -c 'hpf$')" -ne 201 ] || [ "$(dumps_in "$TMP/$name")" -eq 0 ]; then
    bad "$name" "$(ls "$TMP/$name" | grep -c 'hpf$') exit profiles (expected 201) and $(dumps_in "$TMP/$name") interval dumps"
else
    nok=0
    for f in "$TMP/$name"/p.*; do
        "$REPORT" --format json -o "$TMP/r.json" "$f" 2>"$TMP/r.err" || { nok=1; bad "$name" "$(head -c 300 "$TMP/r.err")"; break; }
    done
    [ $nok = 0 ] && ok "$name"
fi
