# timeout: 300
# Access profiling over an allocator profiled without headers (issue 41 with issue 42): test/
# access/headerless.c built by heapprof-cc (clang inline counters, clang callbacks, gcc) and
# linked with an allocator of its own built plainly (test/profiling/own_malloc.c). Bare and under
# heapprof-run the same output; the profile is headerless and each site's accesses, writes and
# utilisation are exact (8 blocks a site: 24 accesses, 12 writes, 100%; 1 access, 25%).
. "$ROOT/test/access/e2e_lib.sh"
for m in inline callbacks gcc; do
    name=access-headerless-$m
    access_need "$name" || continue
    d=$TMP/$name
    mkdir -p "$d"
    # shellcheck disable=SC2046
    if ! gcc -O2 -g -c -o "$d/own_malloc.o" "$ROOT/test/profiling/own_malloc.c" 2>"$d/build.err" ||
        ! env $(access_env "$m") "$HEAPPROF_CC" -O2 -o "$d/headerless" "$ACCESS_SRC/headerless.c" \
            "$d/own_malloc.o" 2>>"$d/build.err"; then
        bad "$name" "build: $(head -c 400 "$d/build.err" | tr '\n' '|')"
        continue
    fi
    if ! "$d/headerless" >"$d/bare.out" 2>&1 || ! grep -q "own allocator used: yes" "$d/bare.out"; then
        bad "$name" "bare: $(head -c 300 "$d/bare.out")"
        continue
    fi
    access_profile "$name" "$d" "$d/headerless" || continue
    if ! cmp -s "$d/bare.out" "$d/run.out"; then
        bad "$name" "output differs under heapprof-run: $(diff "$d/bare.out" "$d/run.out" | head -4 | tr '\n' '|')"
        continue
    fi
    if msg=$(python3 - "$d/report.json" "$m" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
apart = sys.argv[2] != "inline"
ft = d.get("frame_table") or []
def fn(c):
    f = c["frames"][0]
    return (ft[f] if isinstance(f, int) else f)["function"]
want = {"site_both": (100, 24, 12, 100), "site_one": (200, 1, 1, 25)}
problems = []
if d["summary"].get("headerless") != 1:
    problems.append("summary headerless is %s" % d["summary"].get("headerless"))
for name, (size, acc, wr, pct) in want.items():
    cs = [c for c in d["contexts"] if c["frames"] and fn(c) == name]
    if len(cs) != 1:
        problems.append("%s: %d contexts" % (name, len(cs)))
        continue
    c = cs[0]
    got = (c["alloc_count"], c["total_size"], c["total_access_count"], c["min_access_count"],
           c["max_access_count"], c["min_percent_utilized"], c["max_percent_utilized"])
    exp = (8, 8 * size, 8 * acc, acc, acc, pct, pct)
    if got != exp:
        problems.append("%s: (allocations, bytes, accesses, min, max, min%%, max%%) %s, expected %s" % (name, got, exp))
    if apart and (c["total_write_count"], c["total_read_count"]) != (8 * wr, 8 * (acc - wr)):
        problems.append("%s: writes %s reads %s, expected %d, %d" % (name, c["total_write_count"], c["total_read_count"], 8 * wr, 8 * (acc - wr)))
print("; ".join(problems))
sys.exit(1 if problems else 0)
PY
    ); then
        ok "$name"
    else
        bad "$name" "$msg"
    fi
done
