# timeout: 300
# Access profiling's registry of live blocks under threads and interval dumps (issue 41):
# test/access/threads.c built by heapprof-cc (clang inline counters, clang callbacks, gcc), its
# blocks freed by another thread half of the time while the shim dumps every 2 ms. Bare and
# under heapprof-run the same output; interval dumps were made, each with all of site_make's
# accesses in its histogram (small blocks' bins wait in the thread caches until a dump flushes
# them), and the exit profile has site_make's 80,000 blocks of 128 bytes with 32 accesses each
# (16 writes), none live.
. "$ROOT/test/access/e2e_lib.sh"
for m in inline callbacks gcc; do
    name=access-threads-$m
    HEAPPROF_OPTIONS=dump_interval_ms=2 access_sites "$name" "$m" "$ACCESS_SRC/threads.c" -pthread || continue
    dumps=$(ls "$TMP/$name" | grep '^p\..*\.hpf\.[0-9]*$')
    msg=
    for f in $dumps; do
        m2=
        "$REPORT" --format json -o "$TMP/$name/dump.json" "$TMP/$name/$f" 2>/dev/null &&
            m2=$(python3 "$ACCESS_SRC/check_sites.py" "$TMP/$name/dump.json" "$m" --hist site_make) ||
            msg="$msg $f: ${m2:-unreadable};"
    done
    if [ -z "$dumps" ]; then
        bad "$name" "no interval dump was written"
    elif [ -n "$msg" ]; then
        bad "$name" "interval dumps:$msg"
    elif msg=$(python3 "$ACCESS_SRC/check_sites.py" "$TMP/$name/report.json" "$m" site_make=80000,128,32,16); then
        ok "$name"
    else
        bad "$name" "$msg"
    fi
done
