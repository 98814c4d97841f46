# heapprof-run: the default file name (heapprof.PROGRAM.PID.hpf in the working directory), its
# message on stderr, the program's exit status kept.
# timeout: 300
name=heapprof-run
(cd "$TMP" && "$ROOT/scripts/heapprof-run" "$PBIN/gcc/sites" >/dev/null 2>"$TMP/run.err")
rc=$?
if [ $rc -eq 0 ] && ls "$TMP"/heapprof.sites.*.hpf >/dev/null 2>&1 && grep -q "profile written to $TMP/heapprof.sites" "$TMP/run.err"; then
    ok "$name"
else
    bad "$name" "rc=$rc, files: $(ls "$TMP" | tr '\n' ' '), stderr: $(head -c 200 "$TMP/run.err")"
fi
