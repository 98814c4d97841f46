# timeout: 300
# Access profiling over an allocator profiled without headers (issue 41 with issue 42): test/
# access/headerless.c built by heapprof-cc (clang inline counters, clang callbacks, gcc) and
# linked with an allocator of its own built plainly (test/profiling/own_malloc.c). Bare and under
# heapprof-run the same output; the profile is headerless and each site's accesses, writes and
# utilisation are exact (8 blocks a site: 24 accesses, 12 writes, 100%; 1 access, 25%).
. "$ROOT/test/access/e2e_lib.sh"
mkdir -p "$TMP/own"
if ! gcc -O2 -g -c -o "$TMP/own/own_malloc.o" "$ROOT/test/profiling/own_malloc.c" 2>"$TMP/own/build.err"; then
    bad access-headerless "own_malloc.c: $(head -c 300 "$TMP/own/build.err")"
    return 0 2>/dev/null || exit
fi
for m in inline callbacks gcc; do
    name=access-headerless-$m
    access_sites "$name" "$m" "$ACCESS_SRC/headerless.c" "$TMP/own/own_malloc.o" || continue
    if ! grep -q "own allocator used: yes" "$TMP/$name/bare.out"; then
        bad "$name" "its own allocator was not used: $(head -c 300 "$TMP/$name/bare.out")"
    elif msg=$(python3 "$ACCESS_SRC/check_sites.py" "$TMP/$name/report.json" "$m" --headerless \
        site_both=8,100,24,12,100 site_one=8,200,1,1,25); then
        ok "$name"
    else
        bad "$name" "$msg"
    fi
done
