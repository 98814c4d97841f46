# dump_peak_growth: a process killed with SIGKILL (no exit profile) leaves <output>.peak, the
# profile of its biggest heap; no temporary file stays behind.
# timeout: 300
build "$PBIN/gcc/peak_kill" gcc -O1 -g test/profiling/peak_kill.c
name=peak-kill
fresh "$name"
HEAPPROF_OPTIONS="output=$TMP/$name/p.%p.hpf:dump_peak_growth=50" LD_PRELOAD="$SHIM" "$PBIN/gcc/peak_kill" 2>"$TMP/$name.err"
st=$?
files=$(ls "$TMP/$name")
case $files in
p.*.hpf.peak) [ $st -eq 137 ] && check "$name" peak_kill "$TMP/$name/$files" || bad "$name" "status $st, expected 137" ;;
*) bad "$name" "files: $(echo $files), expected one p.PID.hpf.peak; $(head -c 200 "$TMP/$name.err")" ;;
esac
