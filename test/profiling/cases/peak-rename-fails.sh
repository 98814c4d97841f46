# A peak dump that cannot be renamed into place (<output>.peak is a directory here) says so
# and leaves no .peak.tmp behind: a reader would take a leftover .tmp for an unfinished dump.
# timeout: 300
build "$PBIN/gcc/peak_kill" gcc -O1 -g test/profiling/peak_kill.c
name=peak-rename-fails
fresh "$name"
mkdir -p "$TMP/$name/p.hpf.peak" && : >"$TMP/$name/p.hpf.peak/keep"
HEAPPROF_OPTIONS="output=$TMP/$name/p.hpf:dump_peak_growth=50" LD_PRELOAD="$SHIM" "$PBIN/gcc/peak_kill" 2>"$TMP/$name.err"
st=$?
if [ $st -ne 137 ]; then
    bad "$name" "status $st, expected 137"
elif ls "$TMP/$name" | grep -q 'tmp$'; then
    bad "$name" "a temporary file stayed: $(ls "$TMP/$name" | tr '\n' ' ')"
elif ! grep -q '^heapprof: .*writing profile .*p.hpf.peak.tmp: .*removed' "$TMP/$name.err"; then
    bad "$name" "no error line; stderr: $(head -c 300 "$TMP/$name.err")"
else
    ok "$name"
fi
