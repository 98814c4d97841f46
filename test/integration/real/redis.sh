# requires: redis-server redis-cli
# Redis: a server with jemalloc of its own (Debian links libjemalloc.so.2, which it then serves
# malloc from under the shim too), its background threads, and clients that write strings,
# lists, hashes and sorted sets, read them back, sort, expire and delete, then shut it down.
# The server listens on a unix socket of its own directory only.
set -e
work=$(mktemp -d /tmp/heapprof-redis.XXXXXX)
sock=$work/redis.sock
finish() {
    redis-cli -s "$sock" shutdown nosave >/dev/null 2>&1 || true
    wait 2>/dev/null || true
    rm -rf "$work"
}
trap finish EXIT
redis-server --port 0 --unixsocket "$sock" --dir "$work" --save "" --appendonly no \
    --logfile "$work/server.log" --daemonize no &
for _ in $(seq 100); do
    [ -S "$sock" ] && redis-cli -s "$sock" ping >/dev/null 2>&1 && break
    sleep 0.1
done
cli() { redis-cli -s "$sock" "$@"; }
# (awk writes the commands: a subshell per command would be a process and a profile each)
awk 'BEGIN { for (i = 1; i <= 2000; i++) {
    printf "SET key:%d value-%d-%0*d\n", i, i, i % 300, 0
    printf "RPUSH list:%d item-%d\nHSET hash:%d field-%d %d\n", i % 10, i, i % 50, i, i
    printf "ZADD zset %d member-%d\n", i * 7919 % 2003, i } }' | cli >/dev/null
cli dbsize
cli get key:1234 | wc -c
cli llen list:3
cli lrange list:7 0 4
cli hlen hash:17
cli zrange zset 0 4 withscores
cli sort list:2 alpha limit 0 5
awk 'BEGIN { for (i = 1; i <= 500; i++) print "DEL key:" i
    for (i = 501; i <= 700; i++) print "EXPIRE key:" i " 1000" }' | cli >/dev/null
cli dbsize
cli ttl key:600 | awk '{ print ($1 > 900) }'
cli shutdown nosave >/dev/null 2>&1 || true
wait
