# test/integration/real/redis.sh bare and under the shim: the same answers, and the server's
# profile reads, names libjemalloc as the allocator under the shim (Debian links it into
# redis), and holds the clients' 8,000 writes (a key and a value, list, hash or sorted-set
# entries: more than 6,000 allocations).
# timeout: 300
real_checks redis
dir=$TMP/real.redis.shim/prof
if [ -d "$dir" ] && [ "$(cat "$TMP/real.redis.shim/st" 2>/dev/null)" = 0 ]; then
    msg=$(for f in "$dir"/*.hpf; do
        "$REPORT" --format json "$f" 2>&1 || echo "$f: unreadable"
    done | python3 -c '
import json, sys
dec, text, server = json.JSONDecoder(), sys.stdin.read(), None
i = 0
while i < len(text):
    if text[i].isspace():
        i += 1
        continue
    if text[i] != "{":
        sys.exit(print(text[i:i + 200].splitlines()[0]))
    d, i = dec.raw_decode(text, i)
    if d["process"]["command_line"][0].startswith("redis-server"):
        server = d
if server is None:
    sys.exit(print("no profile of redis-server"))
alloc = server["process"]["allocator"]
n = sum(c["alloc_count"] for c in server["contexts"])
if "libjemalloc" not in alloc:
    print("allocator", alloc)
elif n < 6000:
    print("only", n, "allocations in the server")
')
    if [ -z "$msg" ]; then ok real/redis-server; else bad real/redis-server "$msg"; fi
fi
