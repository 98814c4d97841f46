# A descriptor 9 the command inherits from its caller stays the command's; heapprof-run's notes
# take another.
# timeout: 300
name=heapprof-run-inherited-fd
"$ROOT/scripts/heapprof-run" -o "$TMP/inh.%p.hpf" sh -c "printf MINE >&9; \"$PBIN/gcc/sites\" >/dev/null" \
    >/dev/null 2>"$TMP/inh.err" 9>"$TMP/inh.nine"
rc=$?
if [ $rc -ne 0 ] || [ "$(cat "$TMP/inh.nine")" != MINE ]; then
    bad "$name" "exit status $rc, descriptor 9's file holds '$(head -c 300 "$TMP/inh.nine")'"
elif ! grep -q "profile written to $TMP/inh\." "$TMP/inh.err"; then
    bad "$name" "no notes on heapprof-run's stderr: $(head -c 300 "$TMP/inh.err")"
else
    ok "$name"
fi
