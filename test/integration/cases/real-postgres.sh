# test/integration/real/postgres.sh bare and under the shim: the same answers, and every
# process (initdb's, the postmaster's forked workers and backends, psql, pg_ctl) leaves a
# profile that reads.
# timeout: 600
if [ "$(id -u)" = 0 ] && command -v runuser >/dev/null && ! runuser -u postgres -- true 2>/dev/null; then
    skip real/postgres "running as root, and runuser cannot switch to the postgres user here"
    exit 0
fi
real_checks postgres
dir=$TMP/real.postgres.shim/prof
if [ -d "$dir" ] && [ "$(cat "$TMP/real.postgres.shim/st" 2>/dev/null)" = 0 ]; then
    n=0 unread=""
    for f in "$dir"/*.hpf*; do
        [ -f "$f" ] || continue
        n=$((n + 1))
        "$REPORT" "$f" >/dev/null 2>"$TMP/real.postgres.rep" || unread="$unread $(basename "$f")"
    done
    # initdb and its single-user servers, pg_ctl twice, the postmaster and at least four of its
    # workers (checkpointer, background writer, WAL writer, autovacuum launcher), a backend, psql
    if [ "$n" -lt 10 ]; then
        bad real/postgres-profiles "$n profiles, expected at least 10: $(ls "$dir" | head -20 | tr '\n' ' ')"
    elif [ -n "$unread" ]; then
        bad real/postgres-profiles "unreadable:$unread ($(head -c 200 "$TMP/real.postgres.rep"))"
    else
        ok real/postgres-profiles
    fi
fi
