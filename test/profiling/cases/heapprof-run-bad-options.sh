# Options heapprof-run is given (or finds in HEAPPROF_OPTIONS) are checked once, before the
# command runs: wrong ones are said once, not by every process, and nothing runs.
# timeout: 300
name=heapprof-run-bad-options
HEAPPROF_OPTIONS=unwinder=foo "$ROOT/scripts/heapprof-run" -o "$TMP/badopt.%p.hpf" \
    --options stack_depth=1000:bogus_option=1 sh -c "touch \"$TMP/badopt.ran\"; \"$PBIN/gcc/sites\"" \
    >/dev/null 2>"$TMP/badopt.err"
rc=$?
if [ $rc -ne 2 ]; then
    bad "$name" "exit status $rc, expected 2: $(head -c 300 "$TMP/badopt.err")"
elif [ -e "$TMP/badopt.ran" ] || ls "$TMP"/badopt.*.hpf >/dev/null 2>&1; then
    bad "$name" "the command ran (or a profile was written)"
elif [ "$(grep -c "^heapprof: unknown option 'bogus_option' (help=1 lists them)$" "$TMP/badopt.err")" != 1 ] ||
    [ "$(grep -c "^heapprof: option stack_depth=1000 is out of range (1..256): using 256$" "$TMP/badopt.err")" != 1 ] ||
    [ "$(grep -c "^heapprof: unknown unwinder 'foo' (cfi, fp, libunwind); using cfi$" "$TMP/badopt.err")" != 1 ] ||
    ! grep -q "^heapprof-run: sh was not run: correct the options above" "$TMP/badopt.err" ||
    [ "$(wc -l <"$TMP/badopt.err")" != 4 ]; then
    bad "$name" "messages: $(head -c 500 "$TMP/badopt.err")"
else
    ok "$name"
fi
