# What exec cannot run (a directory, a file without execute permission): one line of
# heapprof-run's, and a shell's status for it (126).
# timeout: 300
mkdir -p "$TMP/refuse/adir"
cp "$PBIN/gcc/sites" "$TMP/refuse/noexec" && chmod 644 "$TMP/refuse/noexec"
for what in "adir:is a directory" "noexec:permission denied (not executable)"; do
    f=${what%%:*} msg=${what#*:}
    name=heapprof-run-cannot-run-$f
    "$ROOT/scripts/heapprof-run" -q -o "$TMP/cr.%p.hpf" "$TMP/refuse/$f" >/dev/null 2>"$TMP/$name.err"
    rc=$?
    if [ $rc -eq 126 ] && [ "$(cat "$TMP/$name.err")" = "heapprof-run: $TMP/refuse/$f: $msg" ]; then
        ok "$name"
    else
        bad "$name" "rc=$rc, stderr: $(head -c 300 "$TMP/$name.err")"
    fi
done
