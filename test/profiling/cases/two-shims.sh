# Two copies of the shim preloaded at once (two builds, or one under another path): the first
# in LD_PRELOAD profiles, the other forwards to the allocator after it, writes nothing, and
# says so in one line (before, both profiled: two profiles per process).
mkdir -p "$TMP/shim-copy"
cp "$SHIM" "$TMP/shim-copy/libheapprof_shim.so"
for order in copy-second copy-first; do
    name=two-shims-$order
    if [ $order = copy-second ]; then first=$SHIM second=$TMP/shim-copy/libheapprof_shim.so; else first=$TMP/shim-copy/libheapprof_shim.so second=$SHIM; fi
    fresh "$name"
    HEAPPROF_OPTIONS="output=$TMP/$name/p.%p.hpf:dump_signal=12" LD_PRELOAD="$first $second" \
        "$PBIN/gcc/sites" signal >/dev/null 2>"$TMP/$name.err"
    st=$?
    files=$(ls "$TMP/$name" | grep -v '\.hpf\.[0-9]*$')
    case $(grep '^heapprof:' "$TMP/$name.err") in
    "heapprof: another copy of heapprof's shim ($first) comes before this one ($second) and profiles the process; this one only forwards to "*libc.so.6)
        case $files in
        p.*.hpf) [ $st -eq 0 ] && check "$name" exit "$TMP/$name/$files" || bad "$name" "status $st" ;;
        *) bad "$name" "profiles: $(echo $files), expected one" ;;
        esac ;;
    *) bad "$name" "status $st, expected one line from heapprof: $(head -c 400 "$TMP/$name.err")" ;;
    esac
done

# heapprof-run puts its shim in place of one in the user's LD_PRELOAD: one profile, no warning.
# The script itself and its helpers (sed, od, readelf) run without that preload: they left a
# profile each in the working directory.
name=two-shims-heapprof-run
fresh "$name"
mkdir -p "$TMP/$name.cwd"
(cd "$TMP/$name.cwd" && LD_PRELOAD="$TMP/shim-copy/libheapprof_shim.so" "$ROOT/scripts/heapprof-run" -q \
    -o "$TMP/$name/p.%p.hpf" --options dump_signal=12 -- "$PBIN/gcc/sites" signal >/dev/null 2>"$TMP/$name.err")
st=$?
files=$(ls "$TMP/$name" | grep -v '\.hpf\.[0-9]*$')
stray=$(ls "$TMP/$name.cwd")
case $st/$files in
0/p.*.hpf)
    if grep -q '^heapprof' "$TMP/$name.err"; then
        bad "$name" "$(head -c 300 "$TMP/$name.err")"
    elif [ -n "$stray" ]; then
        bad "$name" "profiles of heapprof-run's own processes: $(echo $stray | head -c 200)"
    else
        check "$name" exit "$TMP/$name/$files"
    fi ;;
*) bad "$name" "status $st, profiles: $(echo $files), expected one; $(head -c 300 "$TMP/$name.err")" ;;
esac
