# timeout: 300
# gcc's ThreadSanitizer instrumentation makes every atomic operation a call that the runtime
# carries out (instrument/tsan.c): test/access/atomics.c, every operation at 1, 2, 4, 8 and 16
# bytes, prints the same as a plain gcc build bare and under heapprof-run, and each operation
# counts one access, a load a read and the rest writes (per width 18: 2 loads; 16 bytes: 5, 1
# load).
. "$ROOT/test/access/e2e_lib.sh"
name=access-atomics
mkdir -p "$TMP/$name-plain"
if ! gcc -O2 -o "$TMP/$name-plain/prog" "$ACCESS_SRC/atomics.c" -latomic 2>"$TMP/$name-plain/err" ||
    ! "$TMP/$name-plain/prog" >"$TMP/$name-plain/out"; then
    bad "$name" "the plain gcc build: $(head -c 300 "$TMP/$name-plain/err")"
elif access_sites "$name" gcc "$ACCESS_SRC/atomics.c"; then
    if ! cmp -s "$TMP/$name-plain/out" "$TMP/$name/bare.out"; then
        bad "$name" "results differ from the plain build's: $(diff "$TMP/$name-plain/out" "$TMP/$name/bare.out" | head -4 | tr '\n' '|')"
    elif msg=$(python3 "$ACCESS_SRC/check_sites.py" "$TMP/$name/report.json" gcc \
        site_atomics=1,64,72,64 site_atomics16=1,64,5,4); then
        ok "$name"
    else
        bad "$name" "$msg"
    fi
fi
