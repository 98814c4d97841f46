# A profile that cannot be written whole (a file size limit here; a full disk the same) is said
# in one line and removed, not left for the reader to reject; the program's status stays. Also
# while the program runs: evicted records go to the file as they come.
# timeout: 300
name=write-fails
if have_prog "$name" "$PBIN/gcc/quick_exit"; then
    fresh "$name"
    (ulimit -f 1 && HEAPPROF_OPTIONS="output=$TMP/$name/p.%p.hpf" LD_PRELOAD="$SHIM" "$PBIN/gcc/quick_exit" \
        >/dev/null 2>"$TMP/$name.err")
    st=$?
    case $(grep '^heapprof:' "$TMP/$name.err") in
    "heapprof: writing profile $TMP/$name/p."*".hpf: file too large for the file system or RLIMIT_FSIZE; the incomplete file was removed")
        if [ $st -ne 3 ]; then bad "$name" "status $st, expected 3"
        elif [ -n "$(ls "$TMP/$name")" ]; then bad "$name" "left: $(ls "$TMP/$name")"
        else ok "$name"; fi ;;
    *) bad "$name" "status $st, expected one line from heapprof: $(head -c 300 "$TMP/$name.err")" ;;
    esac
fi

name=write-fails-evicting
if have_prog "$name" "$PBIN/gcc/evict"; then
    fresh "$name"
    (ulimit -f 2 && HEAPPROF_OPTIONS="output=$TMP/$name/p.%p.hpf:hib_table_size=16:hib_table_ways=2:stack_depth=256" \
        LD_PRELOAD="$SHIM" "$PBIN/gcc/evict" "$TMP/$name.own" >"$TMP/$name.out" 2>"$TMP/$name.err")
    st=$?
    if [ $st -ne 0 ] || ! grep -q 'evict done' "$TMP/$name.out"; then
        bad "$name" "status $st: $(cat "$TMP/$name.out" "$TMP/$name.err" | head -c 300)"
    elif [ -n "$(ls "$TMP/$name")" ] || [ "$(grep -c '^heapprof:' "$TMP/$name.err")" -ne 1 ]; then
        bad "$name" "left: $(ls "$TMP/$name"); $(head -c 300 "$TMP/$name.err")"
    else
        ok "$name"
    fi
fi
