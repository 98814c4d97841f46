# An output directory that does not exist is said in one line when the program starts (not
# only at exit), with interval dumps too; one that goes away later is said once for the
# on-demand dumps and once at exit. The program runs as bare.
# timeout: 300
name=output-dir-missing
if have_prog "$name" "$PBIN/gcc/quick_exit"; then
    HEAPPROF_OPTIONS="output=$TMP/no-such-dir/p.%p.hpf" LD_PRELOAD="$SHIM" "$PBIN/gcc/quick_exit" >/dev/null 2>"$TMP/$name.err"
    st=$?
    case $(grep '^heapprof:' "$TMP/$name.err") in
    "heapprof: profiles cannot be written: $TMP/no-such-dir does not exist (output=$TMP/no-such-dir/p.%p.hpf)")
        [ $st -eq 3 ] && ok "$name" || bad "$name" "status $st, expected 3" ;;
    *) bad "$name" "expected one line from heapprof: $(head -c 300 "$TMP/$name.err")" ;;
    esac
fi

name=output-dir-missing-interval
HEAPPROF_OPTIONS="output=$TMP/no-such-dir/p.%p.hpf:dump_interval_ms=20" LD_PRELOAD="$SHIM" "$PBIN/gcc/sites" >/dev/null 2>"$TMP/$name.err"
n_all=$(grep -c "^heapprof:" "$TMP/$name.err")
n_start=$(grep -c "profiles cannot be written: $TMP/no-such-dir does not exist" "$TMP/$name.err")
if [ "$n_all" -eq 1 ] && [ "$n_start" -eq 1 ]; then ok "$name"; else bad "$name" "$n_all messages: $(head -c 300 "$TMP/$name.err")"; fi

name=output-dir-removed
mkdir -p "$TMP/$name.d"
build "$PBIN/gcc/outdir_gone" gcc -O1 -g test/profiling/outdir_gone.c
HEAPPROF_OPTIONS="output=$TMP/$name.d/p.%p.hpf:dump_interval_ms=20" LD_PRELOAD="$SHIM" "$PBIN/gcc/outdir_gone" "$TMP/$name.d" 2>"$TMP/$name.err"
st=$?
n_od=$(grep -c "cannot create profile .*\.hpf\.[0-9]*: no such directory (later on-demand dumps" "$TMP/$name.err")
n_all=$(grep -c "^heapprof:" "$TMP/$name.err")
if [ $st -eq 0 ] && [ "$n_od" -eq 1 ] && [ "$n_all" -eq 2 ]; then ok "$name"; else bad "$name" "status $st, $n_all messages, $n_od about on-demand dumps: $(head -c 300 "$TMP/$name.err")"; fi
