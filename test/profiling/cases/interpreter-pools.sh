# Python and PHP keep their objects in memory they map themselves: run as they are, the shim
# says so in one line and the profile lacks the objects (100,000 strings, a few hundred blocks
# seen); with their switch to malloc (set by hand, or by heapprof-run --no-pools) nothing is
# said and every string is a block of the profile. A variable the user set is left as it is,
# and a C program gets no such line.
name=interpreter-pools

# pool_counts NAME: "allocations peak_live_count" of the one profile of run NAME.
pool_counts() {
    local prof
    prof=$(ls "$TMP/$1"/*.hpf 2>/dev/null | head -1)
    [ -n "$prof" ] && "$REPORT" --format json "$prof" 2>/dev/null | python3 -c '
import json, sys
d = json.load(sys.stdin)
print(sum(c["alloc_count"] for c in d["contexts"]), d["summary"]["peak_live_count"])'
}

# pool_case NAME WANT_LINE MIN MAX: the run NAME said WANT_LINE (a pattern; "" for no heapprof
# line at all), printed the 100,000 strings' count, and its profile has between MIN and MAX
# allocations (and as many live at the peak, at least MIN).
pool_case() {
    local n=$1 want=$2 min=$3 max=$4 lines said counts allocs peak
    lines=$(grep -c '^heapprof:' "$TMP/$n.err")
    said=$(grep -c "^heapprof: $want" "$TMP/$n.err")
    counts=$(pool_counts "$n")
    read -r allocs peak <<<"${counts:-0 0}"
    if [ "$(head -1 "$TMP/$n.out")" != 100000 ]; then
        bad "$n" "output: $(head -c 200 "$TMP/$n.out")"
    elif [ -n "$want" ] && { [ "$said" != 1 ] || [ "$lines" != 1 ]; }; then
        bad "$n" "expected one line '$want': $(grep '^heapprof:' "$TMP/$n.err" | head -c 400)"
    elif [ -z "$want" ] && [ "$lines" != 0 ]; then
        bad "$n" "expected no heapprof line: $(grep '^heapprof:' "$TMP/$n.err" | head -c 400)"
    elif [ "$allocs" -lt "$min" ] || [ "$allocs" -gt "$max" ] || [ "$peak" -lt $((min < 100000 ? 0 : 100000)) ]; then
        bad "$n" "profile: $allocs allocations, $peak live at the peak; expected $min..$max"
    else
        ok "$n"
    fi
}

# hp_run NAME ARGS...: heapprof-run ARGS into $TMP/NAME (stdout and stderr as run's).
hp_run() {
    local n=$1
    shift
    fresh "$n"
    (cd "$TMP/$n" && timeout -k 5 120 "$ROOT/scripts/heapprof-run" -q -o "$TMP/$n/p.%p.hpf" "$@" \
        >"$TMP/$n.out" 2>"$TMP/$n.err")
}

py_line="this program runs Python, whose small objects come from pymalloc's own arenas"
php_line="this program runs PHP, whose allocator maps its own memory"
py_prog='import os; x = [str(i) for i in range(100000)]; print(len(x)); print(os.environ.get("PYTHONMALLOC"))'
php_prog='$a = []; for ($i = 0; $i < 100000; $i++) { $a[] = "s" . $i; } echo count($a), "\n", getenv("USE_ZEND_ALLOC"), "\n";'

if [ ! -x /usr/bin/python3 ]; then
    skip "$name-python" "/usr/bin/python3 not installed"
else
    (unset PYTHONMALLOC; run "$name-python" "" /usr/bin/python3 -c "$py_prog") &&
        pool_case "$name-python" "$py_line" 1 50000
    PYTHONMALLOC=malloc run "$name-python-malloc" "" /usr/bin/python3 -c "$py_prog" &&
        pool_case "$name-python-malloc" "" 100000 100000000
    (unset PYTHONMALLOC; hp_run "$name-python-run" --no-pools /usr/bin/python3 -c "$py_prog")
    if [ "$(sed -n 2p "$TMP/$name-python-run.out")" != malloc ]; then
        bad "$name-python-run" "PYTHONMALLOC was not set: $(head -c 200 "$TMP/$name-python-run.out") $(head -c 200 "$TMP/$name-python-run.err")"
    else
        pool_case "$name-python-run" "" 100000 100000000
    fi
    PYTHONMALLOC=pymalloc hp_run "$name-python-kept" --no-pools /usr/bin/python3 -c "$py_prog"
    if [ "$(sed -n 2p "$TMP/$name-python-kept.out")" != pymalloc ]; then
        bad "$name-python-kept" "the user's PYTHONMALLOC was replaced: $(head -c 200 "$TMP/$name-python-kept.out")"
    else
        pool_case "$name-python-kept" "$py_line" 1 50000
    fi
fi

if ! command -v php >/dev/null 2>&1; then
    skip "$name-php" "php not installed (php-cli)"
else
    (unset USE_ZEND_ALLOC; run "$name-php" "" php -r "$php_prog") &&
        pool_case "$name-php" "$php_line" 1 50000
    (unset USE_ZEND_ALLOC; hp_run "$name-php-run" --no-pools php -r "$php_prog")
    if [ "$(sed -n 2p "$TMP/$name-php-run.out")" != 0 ]; then
        bad "$name-php-run" "USE_ZEND_ALLOC was not set: $(head -c 200 "$TMP/$name-php-run.out") $(head -c 200 "$TMP/$name-php-run.err")"
    else
        pool_case "$name-php-run" "" 100000 100000000
    fi
fi

run "$name-c" "" "$PBIN/gcc/sites" && if grep -Eq '^heapprof: this program runs (Python|PHP)' "$TMP/$name-c.err"; then
    bad "$name-c" "a C program was taken for an interpreter: $(head -c 300 "$TMP/$name-c.err")"
else
    ok "$name-c"
fi
