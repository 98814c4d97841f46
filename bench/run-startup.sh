#!/bin/sh
# heapprof-run's start-up cost (by hand; not part of make bench): `heapprof-run -- /bin/true`
# against plain LD_PRELOAD, where a build that starts its compilers through heapprof-run pays
# the difference once per process. N runs of each (default 200), one after the other, and the
# mean wall and cpu time of one run in ms; also how many programs one heapprof-run execs (strace, when
# installed). Usage, from the repository root after make:
#   sh bench/run-startup.sh [N] [HEAPPROF_RUN]      (HEAPPROF_RUN: another copy of the script)
set -u

die() { echo "bench/run-startup: $*" >&2; exit 1; }

N=${1:-200}
case $N in '' | *[!0-9]*) die "N must be a number, not '$N'" ;; esac
[ "$N" -gt 0 ] || die "N must be positive"
ROOT=$(pwd)
RUN=${2:-$ROOT/scripts/heapprof-run}
SHIM=$ROOT/build/libheapprof_shim.so
[ -f "$SHIM" ] || die "no $SHIM: run make first"
[ -x /usr/bin/time ] || die "/usr/bin/time is missing (Debian: time)"
TMP=$(mktemp -d "${TMPDIR:-/tmp}/heapprof-startup.XXXXXX") || die "mktemp failed"
trap 'rm -rf "$TMP"' EXIT INT TERM

now_ns() { date +%s%N; }
# per_run NAME CMD...: run CMD N times; print the mean wall time of one run and its mean cpu
# time (user + system of every process it starts: steadier than wall time on a loaded machine).
per_run() {
    name=$1
    shift
    t0=$(now_ns)
    # /usr/bin/time counts the cpu of every process the loop waited for.
    # PLAIN as the command: /bin/true under the shim (the loop's shell sets the environment of
    # that process only, as a shell command line does).
    /usr/bin/time -f "%U %S" -o "$TMP/cpu" sh -c '
        n=$1 shim=$2 tmp=$3; shift 3; i=0
        while [ $i -lt "$n" ]; do
            if [ "$1" = PLAIN ]; then
                HEAPPROF_OPTIONS="output=$tmp/plain.%p.hpf" LD_PRELOAD=$shim /bin/true
            else
                "$@" >/dev/null 2>&1
            fi
            i=$((i + 1))
        done' loop "$N" "$SHIM" "$TMP" "$@"
    t1=$(now_ns)
    awk -v n="$N" -v d=$((t1 - t0)) -v name="$name" '
        { printf "%-34s %7.2f ms wall %7.2f ms cpu\n", name, d / n / 1e6, ($1 + $2) * 1000 / n }' "$TMP/cpu"
}


echo "$N runs each; per run: mean wall time, mean cpu time of its processes"
per_run "/bin/true (bare)" /bin/true
per_run "LD_PRELOAD=libheapprof_shim.so" PLAIN
per_run "heapprof-run -q -- /bin/true" "$RUN" -q -o "$TMP/q.hpf" -- /bin/true
per_run "heapprof-run -- /bin/true" "$RUN" -o "$TMP/n.hpf" -- /bin/true
if command -v strace >/dev/null 2>&1; then
    n=$(strace -f -e trace=execve -o "$TMP/strace" "$RUN" -q -o "$TMP/s.hpf" -- /bin/true >/dev/null 2>&1;
        grep -c 'execve(' "$TMP/strace")
    echo "programs one heapprof-run -q execs: $n (heapprof-run itself and /bin/true included)"
fi
