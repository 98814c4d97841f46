# Option values out of range are said and replaced by the nearest allowed one (an unknown
# unwinder by the default); the profile records what was used.
# timeout: 300
name=options-out-of-range
HEAPPROF_OPTIONS="output=$TMP/range.%p.hpf:stack_depth=1000:unwinder=foo:dump_signal=99" \
    LD_PRELOAD="$SHIM" "$PBIN/gcc/sites" >/dev/null 2>"$TMP/range.err"
rc=$?
used=$("$REPORT" --format json "$TMP"/range.*.hpf 2>&1 |
    python3 -c 'import json, sys; p = json.load(sys.stdin)["process"]; print(p["unwinder"], p["stack_depth"])' 2>&1)
if [ $rc -ne 0 ]; then
    bad "$name" "exit status $rc: $(head -c 300 "$TMP/range.err")"
elif ! grep -q "^heapprof: option stack_depth=1000 is out of range (1..256): using 256$" "$TMP/range.err" ||
    ! grep -q "^heapprof: unknown unwinder 'foo' (cfi, fp, libunwind); using cfi$" "$TMP/range.err" ||
    ! grep -q "^heapprof: option dump_signal=99 is not a signal number (1..64): no dump signal$" "$TMP/range.err"; then
    bad "$name" "warnings: $(head -c 400 "$TMP/range.err")"
elif [ "$used" != "cfi 256" ]; then
    bad "$name" "the profile says unwinder and stack_depth: $(echo "$used" | head -c 300)"
else
    ok "$name"
fi
