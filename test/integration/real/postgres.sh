# requires: pg_ctlcluster psql
# PostgreSQL: initdb (which runs the server in single-user mode), a server started with pg_ctl
# (postmaster, its background workers, a backend forked per connection, none of them exec'd),
# queries that build a table, an index and sorts, and a fast shutdown (SIGINT to the postmaster,
# which signals its children). The server refuses to run as root: then it runs as the postgres
# user, in a directory of its own that user can reach, with a copy of the preloaded library,
# and the profiles are moved to where the test expects them afterwards.
set -e
bin=$(ls -d /usr/lib/postgresql/*/bin | sort -V | tail -1)
work=$(mktemp -d /tmp/heapprof-pg.XXXXXX)
chmod 755 "$work"
prof=""
as_pg() { "$@"; }
if [ "$(id -u)" = 0 ]; then
    as_pg() { runuser -u postgres -- "$@"; }
    chown postgres "$work"
    if [ -n "${LD_PRELOAD:-}" ]; then
        cp "$LD_PRELOAD" "$work/preload.so"
        chmod 644 "$work/preload.so"
        export LD_PRELOAD=$work/preload.so
        prof=${HEAPPROF_OPTIONS#output=}
        prof=${prof%%/%p.hpf*}
        mkdir "$work/prof" && chown postgres "$work/prof"
        export HEAPPROF_OPTIONS="output=$work/prof/%e.%p.hpf"
    fi
fi
finish() {
    as_pg "$bin/pg_ctl" -D "$work/data" -m immediate -w stop >/dev/null 2>&1 || true
    cd /
    [ -n "$prof" ] && mv "$work"/prof/* "$prof"/ 2>/dev/null
    rm -rf "$work"
}
trap finish EXIT
cd "$work" # (the postgres user may not reach the test's own directory)
as_pg "$bin/initdb" -D "$work/data" -A trust -U postgres >"$work/initdb.log" 2>&1 ||
    { cat "$work/initdb.log" >&2; exit 1; }
as_pg "$bin/pg_ctl" -D "$work/data" -o "-k $work -c listen_addresses=''" -l "$work/server.log" -w start >/dev/null
as_pg "$bin/psql" -X -q -h "$work" -U postgres -d postgres -v ON_ERROR_STOP=1 <<'SQL'
CREATE TABLE t AS SELECT g, md5(g::text) AS m, g % 97 AS grp FROM generate_series(1, 100000) g;
CREATE INDEX t_m ON t(m);
SELECT count(*), count(DISTINCT m) FROM t;
SELECT grp, count(*), min(m), max(m) FROM t GROUP BY grp ORDER BY grp LIMIT 5;
SELECT sum(length(m)) FROM t WHERE m LIKE 'ab%';
SELECT string_agg(m, ',' ORDER BY m) IS NOT NULL FROM t WHERE g < 1000;
SQL
as_pg "$bin/pg_ctl" -D "$work/data" -m fast -w stop >/dev/null
