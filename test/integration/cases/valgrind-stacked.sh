# timeout: 300
# heapprof stacked under valgrind's memcheck (the shim preloaded into the program valgrind runs):
# memcheck reports no error of the shim's (its module list once read valgrind's own image, mapped
# at 0x58000000, as if it were the program's), the program's output is unchanged, and the
# profile is one the report tool reads.
name=valgrind-stacked
if ! command -v valgrind >/dev/null 2>&1; then
    skip "$name" "valgrind is not installed"
    return 0 2>/dev/null || exit
fi
bin=$PBIN/gcc/stacked
if ! build "$bin" gcc -O1 -g test/profiling/stacked.c; then
    bad "$name" "cannot build test/profiling/stacked.c"
    return 0 2>/dev/null || exit
fi
fresh "$name"
timeout -k 5 240 env HEAPPROF_OPTIONS="output=$TMP/$name/p.%p.hpf" LD_PRELOAD="$SHIM" \
    valgrind --tool=memcheck --error-exitcode=99 "$bin" >"$TMP/$name.out" 2>"$TMP/$name.err"
st=$?
errors=$(sed -n 's/.*ERROR SUMMARY: \([0-9]*\) errors.*/\1/p' "$TMP/$name.err" | tail -1)
# The program's profile (valgrind's launcher, which the preload reaches too, writes its own).
prof=""
for f in "$TMP/$name"/p.*.hpf; do
    [ -f "$f" ] && "$REPORT" --format json -o "$TMP/r.json" "$f" 2>"$TMP/r.err" &&
        python3 -c 'import json, sys; sys.exit(0 if json.load(open(sys.argv[1]))["process"]["executable"].endswith("/stacked") else 1)' "$TMP/r.json" &&
        prof=$f
done
if [ "$st" -ne 0 ] || [ "${errors:-x}" != 0 ] || [ "$(cat "$TMP/$name.out")" != ok ]; then
    bad "$name" "status $st, memcheck errors ${errors:-?}: $(grep -m1 -A4 'Invalid\|uninitialised' "$TMP/$name.err" | head -c 400 | tr '\n' ' ')"
elif [ -z "$prof" ]; then
    bad "$name" "no readable profile of the program: $(ls "$TMP/$name") $(head -c 300 "$TMP/r.err")"
else
    ok "$name"
fi
