# The pool API of heapprof.h (test/profiling/pool_api.c: a pool allocator of the program's own
# that reports its objects, malloc'd blocks among them, four threads): every site's numbers
# exact in the JSON, pool contexts marked, unknown frees counted (check_pool.py); built with gcc
# and clang, under the fp and cfi unwinders. Without the shim (weak symbols) the program prints
# the same and exits 0. Built by heapprof-cc, pool objects get access counts from the shadow.
CHECK_POOL=$ROOT/test/profiling/check_pool.py

# pool_check NAME PROFILE [access]: the report's JSON passes check_pool.py.
pool_check() {
    local cname=$1 prof=$2 msg
    shift 2
    if [ ! -f "$prof" ]; then bad "$cname" "no profile"; return; fi
    if ! "$REPORT" --format json -o "$TMP/r.json" "$prof" 2>"$TMP/r.err"; then
        bad "$cname" "heapprof-report failed: $(head -c 300 "$TMP/r.err")"
    elif msg=$(python3 "$CHECK_POOL" "$TMP/r.json" "$@" 2>&1); then
        ok "$cname"
    else
        bad "$cname" "$(echo "$msg" | head -5 | tr '\n' ';')"
    fi
}

for cc in gcc clang; do
    bin=$PBIN/$cc/pool_api
    if ! build "$bin" $cc -O2 -g -fno-omit-frame-pointer -pthread -I"$HP_INC" test/profiling/pool_api.c; then
        bad "pool-api-$cc" "cannot build test/profiling/pool_api.c"
        continue
    fi
    # Without the shim: the calls are skipped, the output is the same.
    out=$(timeout 60 "$bin" 2>&1)
    rc=$?
    if [ $rc -eq 0 ] && [ "$out" = "pool_api done" ]; then
        ok "pool-api-$cc-noshim"
    else
        bad "pool-api-$cc-noshim" "status $rc, output: $(echo "$out" | head -c 200)"
    fi
    for unw in fp cfi; do
        name=pool-api-$cc-$unw
        if run "$name" "unwinder=$unw" "$bin"; then
            if [ "$(cat "$TMP/$name.out")" != "pool_api done" ]; then
                bad "$name-output" "$(head -c 200 "$TMP/$name.out")"
            fi
            pool_check "$name" "$(first_profile "$TMP/$name")"
        fi
    done
done

# Access counts: heapprof-cc's default (clang, inline counters).
if command -v clang >/dev/null && [ -f "$BUILD/libheapprof_rt.a" ]; then
    bin=$PBIN/clang/pool_api-access
    if build "$bin" "$ROOT/scripts/heapprof-cc" -O2 -pthread -I"$HP_INC" test/profiling/pool_api.c; then
        if run pool-api-access "" "$bin"; then
            pool_check pool-api-access "$(first_profile "$TMP/pool-api-access")" access
        fi
    else
        bad pool-api-access "heapprof-cc cannot build test/profiling/pool_api.c"
    fi
else
    skip pool-api-access "no clang or no build/libheapprof_rt.a"
fi
