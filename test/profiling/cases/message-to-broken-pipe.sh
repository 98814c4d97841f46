# The shim's messages to a pipe whose reader has gone (`heapprof-run ./app 2>&1 | head`) must
# not end the program with SIGPIPE (status 141 before): its own status stays.
# timeout: 300
build "$PBIN/gcc/quiet_exit" gcc -O1 -g test/profiling/quiet_exit.c
for how in heapprof-run verbosity=2; do
    name=message-to-broken-pipe-$how
    fresh "$name"
    if [ $how = heapprof-run ]; then
        { sleep 1; "$ROOT/scripts/heapprof-run" -o "$TMP/$name/p.%p.hpf" "$PBIN/gcc/quiet_exit" 2>&1; echo $? >"$TMP/$name.st"; } | true
    else
        { sleep 1; HEAPPROF_OPTIONS="output=$TMP/$name/p.%p.hpf:verbosity=2" LD_PRELOAD="$SHIM" "$PBIN/gcc/quiet_exit" 2>&1; echo $? >"$TMP/$name.st"; } | true
    fi
    st=$(cat "$TMP/$name.st")
    files=$(ls "$TMP/$name")
    case $st/$files in
    5/p.*.hpf)
        if "$REPORT" -f json -o "$TMP/$name.json" "$TMP/$name/$files" 2>"$TMP/$name.rerr" &&
            grep -q '"alloc_count": 4' "$TMP/$name.json"; then ok "$name"
        else bad "$name" "profile: $(head -c 200 "$TMP/$name.rerr")"; fi ;;
    *) bad "$name" "status $st, expected 5; profiles: $(echo $files)" ;;
    esac
done
