#!/bin/sh
# heapprof A/B timing: is build B faster than build A? On a shared host whose speed drifts by 2x
# within minutes, and whose two vCPUs often run at different speeds, runs one after the other
# cannot show a 3% change. This runs A and B at the same moment, one on each of two cpus, and
# swaps the cpus every repetition; each swapped pair gives the geometric mean of B/A over both
# placements, which cancels the cpus' difference, and the host's drift hits A and B alike.
# Usage: sh bench/ab.sh A B [REPS]      (from the repository root; REPS even, default 10)
#   A, B: a shim library (path to a .so), optionally followed by :OPTIONS (HEAPPROF_OPTIONS
#   added to output=...), or "bare" for no shim at all.
# Knobs (environment): AB_CPUS="0 1"  AB_CMD (default: python3 bench/py_workload.py 20 with
#   PYTHONMALLOC=malloc PYTHONHASHSEED=0)  AB_STDIN (a file every run reads as its standard
#   input; default /dev/null).
# Prints user+sys CPU seconds of every run and the B/A ratio of every swapped pair, then their
# median and geometric mean. Needs taskset (util-linux) and /usr/bin/time.
set -u

die() { echo "bench/ab: $*" >&2; exit 1; }

[ $# -ge 2 ] || die "usage: sh bench/ab.sh A B [REPS]  (A, B: path/to/shim.so[:options] or bare)"
A=$1 B=$2 REPS=${3:-10}
case $REPS in '' | *[!0-9]*) die "REPS must be a number, not '$REPS'" ;; esac
[ $((REPS % 2)) = 0 ] && [ "$REPS" -gt 0 ] || die "REPS must be even and positive (pairs swap the cpus)"
set -- $(echo "${AB_CPUS:-0 1}")
[ $# = 2 ] || die "AB_CPUS must name two cpus"
CPU0=$1 CPU1=$2
for tool in taskset /usr/bin/time awk; do
    command -v $tool >/dev/null 2>&1 || die "$tool is missing (Debian packages: util-linux, time, mawk)"
done
for x in "$A" "$B"; do
    so=${x%%:*}
    [ "$so" = bare ] || [ -f "$so" ] || die "no such shim library: $so"
done
if [ -z "${AB_CMD:-}" ]; then
    [ -f bench/py_workload.py ] || die "run from the repository root (bench/py_workload.py not found), or set AB_CMD"
    [ -x /usr/bin/python3 ] || die "/usr/bin/python3 is missing (apt-get install python3), or set AB_CMD"
fi
CMD=${AB_CMD:-"env PYTHONMALLOC=malloc PYTHONHASHSEED=0 /usr/bin/python3 $(pwd)/bench/py_workload.py 20"}
IN=${AB_STDIN:-/dev/null}
[ -r "$IN" ] || die "AB_STDIN: cannot read $IN"
TMP=$(mktemp -d "${TMPDIR:-/tmp}/heapprof-ab.XXXXXX") || die "mktemp failed"
trap 'rm -rf "$TMP"' EXIT

# one CPU CONFIG OUT: one run of CMD on cpu CPU; OUT gets "user sys" seconds
one() {
    so=${2%%:*} opts=""
    [ "$so" = "$2" ] || opts=":${2#*:}"
    if [ "$so" = bare ]; then
        taskset -c "$1" /usr/bin/time -f "%U %S" -o "$3" $CMD <"$IN" >/dev/null 2>"$3.err"
        st=$?
    else
        mkdir -p "$TMP/p$1"
        LD_PRELOAD=$so HEAPPROF_OPTIONS="output=$TMP/p$1/%p.hpf$opts" \
            taskset -c "$1" /usr/bin/time -f "%U %S" -o "$3" $CMD <"$IN" >/dev/null 2>"$3.err"
        st=$?
        rm -rf "$TMP/p$1"
    fi
    [ $st = 0 ] || { echo "bench/ab: a run failed (exit status $st):" >&2; cat "$3.err" >&2; exit 1; }
}

cpu_secs() { tail -n 1 "$1" | awk '{ printf "%.2f", $1 + $2 }'; }

echo "A: $A"
echo "B: $B"
echo "command: $CMD"
i=0 prev=""
: >"$TMP/ratios"
while [ $i -lt "$REPS" ]; do
    if [ $((i % 2)) = 0 ]; then ca=$CPU0 cb=$CPU1; else ca=$CPU1 cb=$CPU0; fi
    one "$ca" "$A" "$TMP/a" &
    pa=$!
    one "$cb" "$B" "$TMP/b" &
    pb=$!
    wait $pa || exit 1
    wait $pb || exit 1
    ta=$(cpu_secs "$TMP/a") tb=$(cpu_secs "$TMP/b")
    case "$ta $tb" in "0.00 "* | *" 0.00") die "a run took 0.00 s of cpu: too short to time (give AB_CMD more work)" ;; esac
    r=$(awk -v a="$ta" -v b="$tb" 'BEGIN { printf "%.4f", b / a }')
    printf 'rep %2d: A %ss (cpu %s)  B %ss (cpu %s)  B/A %s\n' $((i + 1)) "$ta" "$ca" "$tb" "$cb" "$r"
    if [ $((i % 2)) = 1 ]; then
        awk -v x="$prev" -v y="$r" 'BEGIN { printf "%.4f\n", sqrt(x * y) }' >>"$TMP/ratios"
    fi
    prev=$r
    i=$((i + 1))
done
sort -n "$TMP/ratios" | awk '{ v[NR] = $1; l += log($1) }
    END {
        m = NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2
        printf "swapped pairs: %d; B/A median %.3f, geometric mean %.3f, range %.3f-%.3f\n",
            NR, m, exp(l / NR), v[1], v[NR]
    }'
