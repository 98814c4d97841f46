# A command that is also a shell builtin (true) is found on PATH like any other.
# timeout: 300
if "$ROOT/scripts/heapprof-run" -q -o "$TMP/b.%p.hpf" true 2>"$TMP/b.err" && ls "$TMP"/b.*.hpf >/dev/null 2>&1; then
    ok heapprof-run-builtin-name
else
    bad heapprof-run-builtin-name "$(head -c 200 "$TMP/b.err")"
fi
