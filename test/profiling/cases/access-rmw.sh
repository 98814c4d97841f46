# timeout: 300
# Read-modify-write accesses (test/access/rmw.c): each p[i] += x is a load and a store (16 words
# x 10 rounds: 320, and one more load: 321 a block; 160 writes where writes are apart), in clang's
# instrumentation and in gcc's ThreadSanitizer instrumentation alike. gcc's asan callbacks (what
# heapprof-cc uses for a gcc before 10; HEAPPROF_GCC_INSTR=asan) leave the store unchecked, as
# asan checks an address once where nothing in between could free it: 161 accesses a block and
# no write (USAGE.md, Limits). Stores alone count the same in every mode (160 a block).
. "$ROOT/test/access/e2e_lib.sh"
for m in inline callbacks gcc gcc-asan; do
    name=access-rmw-$m
    access_sites "$name" "$m" "$ACCESS_SRC/rmw.c" || continue
    rmw=8,128,321,160
    [ $m = gcc-asan ] && rmw=8,128,161,0
    if msg=$(python3 "$ACCESS_SRC/check_sites.py" "$TMP/$name/report.json" "$m" \
        site_rmw=$rmw site_store=8,128,160,160); then
        ok "$name"
    else
        bad "$name" "$msg"
    fi
done
