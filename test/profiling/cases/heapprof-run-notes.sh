# Where profiles went is said on heapprof-run's stderr, never on the programs' own: a program's
# stderr read by another (here a pipe into a file) holds only what the program wrote. A process
# that reused descriptor 9 (which carries the notes) for a file of its own keeps that file clean.
# timeout: 300
name=heapprof-run-notes
"$ROOT/scripts/heapprof-run" -o "$TMP/notes.%p.hpf" sh -c \
    "{ echo own >&2; \"$PBIN/gcc/sites\" >/dev/null; } 2>&1 | cat >\"$TMP/notes.pipe\"; exec 9>\"$TMP/notes.nine\"; printf DATA >&9; \"$PBIN/gcc/sites\" >/dev/null" \
    >/dev/null 2>"$TMP/notes.err"
rc=$?
nprof=$(ls "$TMP"/notes.*.hpf 2>/dev/null | wc -l)
nnotes=$(grep -c "profile written to $TMP/notes\." "$TMP/notes.err")
if [ $rc -ne 0 ]; then
    bad "$name" "exit status $rc: $(head -c 300 "$TMP/notes.err")"
elif [ "$(cat "$TMP/notes.pipe")" != own ]; then
    bad "$name" "the program's stderr holds '$(head -c 300 "$TMP/notes.pipe")', not just 'own'"
elif [ "$(cat "$TMP/notes.nine")" != DATA ]; then
    bad "$name" "the file the program opened as descriptor 9 holds '$(head -c 300 "$TMP/notes.nine")'"
elif [ "$nprof" -lt 4 ] || [ "$nnotes" -lt 3 ]; then
    # sh, cat and the piped sites say where their profiles went; the last sites has descriptor
    # 9 as its own file, so its profile is written but not announced.
    bad "$name" "$nprof profiles, $nnotes notes: $(head -c 300 "$TMP/notes.err")"
else
    ok "$name"
fi
