# Warnings and errors too go to heapprof-run's stderr, not into the program's (a process whose
# stderr is a file of its own printed "unknown option" there). The command sets an option of
# its own for its child, which heapprof-run cannot check beforehand.
# timeout: 300
name=heapprof-run-warnings
"$ROOT/scripts/heapprof-run" -o "$TMP/warn.%p.hpf" sh -c \
    "HEAPPROF_OPTIONS=\"\$HEAPPROF_OPTIONS:bogus_option=1\" \"$PBIN/gcc/sites\" >/dev/null 2>\"$TMP/warn.prog\"" \
    >/dev/null 2>"$TMP/warn.err"
rc=$?
nwarn=$(grep -c "unknown option 'bogus_option'" "$TMP/warn.err")
if [ $rc -ne 0 ]; then
    bad "$name" "exit status $rc: $(head -c 300 "$TMP/warn.err")"
elif [ -s "$TMP/warn.prog" ]; then
    bad "$name" "the program's stderr holds '$(head -c 300 "$TMP/warn.prog")'"
elif [ "$nwarn" -ne 1 ]; then
    bad "$name" "$nwarn warnings on heapprof-run's stderr, expected 1 (sites)"
else
    ok "$name"
fi
