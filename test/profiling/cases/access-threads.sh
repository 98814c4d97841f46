# timeout: 300
# Access profiling's registry of live blocks under threads and interval dumps (issue 41):
# test/access/threads.c built by heapprof-cc (clang inline counters, clang callbacks, gcc), its
# blocks freed by another thread half of the time while the shim dumps every 2 ms. Bare and
# under heapprof-run the same output; the exit profile has site_make's 80,000 blocks with 32
# accesses each (16 writes in callback and gcc builds), none live, and interval dumps were made.
. "$ROOT/test/access/e2e_lib.sh"
for m in inline callbacks gcc; do
    name=access-threads-$m
    access_need "$name" || continue
    d=$TMP/$name
    mkdir -p "$d"
    # shellcheck disable=SC2046
    if ! env $(access_env "$m") "$HEAPPROF_CC" -O2 -pthread -o "$d/threads" "$ACCESS_SRC/threads.c" 2>"$d/build.err"; then
        bad "$name" "build: $(head -c 400 "$d/build.err" | tr '\n' '|')"
        continue
    fi
    if ! "$d/threads" >"$d/bare.out" 2>&1; then
        bad "$name" "bare: $(head -c 300 "$d/bare.out")"
        continue
    fi
    rm -f "$d"/p.*
    HEAPPROF_OPTIONS=dump_interval_ms=2 access_profile "$name" "$d" "$d/threads" || continue
    if ! cmp -s "$d/bare.out" "$d/run.out"; then
        bad "$name" "output differs under heapprof-run: $(diff "$d/bare.out" "$d/run.out" | head -4 | tr '\n' '|')"
        continue
    fi
    dumps=$(ls "$d" | grep -c '^p\..*\.hpf\.[0-9]*$')
    if msg=$(python3 - "$d/report.json" "$m" "$dumps" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
apart = sys.argv[2] != "inline"
ft = d.get("frame_table") or []
def fn(c):
    f = c["frames"][0]
    return (ft[f] if isinstance(f, int) else f)["function"]
problems = []
if int(sys.argv[3]) < 1:
    problems.append("no interval dump was written")
cs = [c for c in d["contexts"] if c["frames"] and fn(c) == "site_make"]
if len(cs) != 1:
    problems.append("site_make: %d contexts" % len(cs))
else:
    c = cs[0]
    got = (c["alloc_count"], c["live_count"], c["total_access_count"], c["min_access_count"], c["max_access_count"])
    exp = (80000, 0, 80000 * 32, 32, 32)
    if got != exp:
        problems.append("site_make (allocations, live, accesses, min, max) %s, expected %s" % (got, exp))
    if apart and c["total_write_count"] != 80000 * 16:
        problems.append("site_make: %s writes, expected %d" % (c["total_write_count"], 80000 * 16))
print("; ".join(problems))
sys.exit(1 if problems else 0)
PY
    ); then
        ok "$name"
    else
        bad "$name" "$msg"
    fi
done
