#!/bin/sh
# heapprof A/B timing: is build B faster than build A, and by how much is a build slower than
# the bare program? On a shared host whose speed drifts by 2x within minutes, runs far apart in
# time cannot show a 3% change. This runs A and B back to back on one cpu, in the order
# A B B A, A B B A, ...: each run of B has a run of A right before or after it, and the
# geometric mean of the two ratios of a quartet cancels a drift that is steady over it.
# The other cpu is left idle on purpose. AB_MODE=together runs A and B at the same moment
# instead, one on each of two cpus, swapping the cpus every repetition: that cancels drift
# better, for telling two builds of similar speed apart (within about 3%), but it is biased
# towards the slower of the two when their times differ a lot: a busy neighbour vCPU slows a run
# down (8-25% on this host, varying), the shorter run has one all the time and the longer one
# finishes alone. For bare against the shim (python3, three rounds of each way at one time) the
# two ways agreed within their noise, 1.62-1.74x each (docs/PERFORMANCE.md, "bench/ab.sh").
# Usage: sh bench/ab.sh A B [REPS]      (from the repository root; REPS even, default 10)
#   A, B: a shim library (path to a .so), optionally followed by :OPTIONS (HEAPPROF_OPTIONS
#   added to output=...), or "bare" for no shim at all.
# Knobs (environment): AB_MODE=alternate|together  AB_CPU=0 (alternate: the cpu every run is
#   pinned to)  AB_CPUS="0 1" (together: the two cpus)  AB_CMD (default: python3
#   bench/py_workload.py 20 with PYTHONMALLOC=malloc PYTHONHASHSEED=0)  AB_STDIN (a file every
#   run reads as its standard input; default /dev/null).
# Prints user+sys CPU seconds of every run and B/A of every repetition, then, over the pairs of
# repetitions (A B + B A, or the two cpu placements), the median and geometric mean of each
# pair's geometric mean. Needs taskset (util-linux) and /usr/bin/time.
set -u

die() { echo "bench/ab: $*" >&2; exit 1; }

[ $# -ge 2 ] || die "usage: sh bench/ab.sh A B [REPS]  (A, B: path/to/shim.so[:options] or bare)"
A=$1 B=$2 REPS=${3:-10}
case $REPS in '' | *[!0-9]*) die "REPS must be a number, not '$REPS'" ;; esac
[ $((REPS % 2)) = 0 ] && [ "$REPS" -gt 0 ] || die "REPS must be even and positive (repetitions go in pairs)"
MODE=${AB_MODE:-alternate}
case $MODE in
alternate)
    CPU=${AB_CPU:-0}
    case $CPU in '' | *[!0-9]*) die "AB_CPU must be a cpu number, not '$CPU'" ;; esac
    taskset -c "$CPU" true 2>/dev/null || die "cannot run on cpu $CPU (AB_CPU)" ;;
together)
    set -- $(echo "${AB_CPUS:-0 1}")
    [ $# = 2 ] || die "AB_CPUS must name two cpus"
    CPU0=$1 CPU1=$2 ;;
*) die "AB_MODE must be alternate or together, not '$MODE'" ;;
esac
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
        # Only the command runs under the shim, not taskset and time around it.
        taskset -c "$1" /usr/bin/time -f "%U %S" -o "$3" \
            env LD_PRELOAD="$so" HEAPPROF_OPTIONS="output=$TMP/p$1/%p.hpf$opts" $CMD <"$IN" >/dev/null 2>"$3.err"
        st=$?
        rm -rf "$TMP/p$1"
    fi
    [ $st = 0 ] || { echo "bench/ab: a run failed (exit status $st):" >&2; cat "$3.err" >&2; exit 1; }
}

cpu_secs() { tail -n 1 "$1" | awk '{ printf "%.2f", $1 + $2 }'; }

echo "A: $A"
echo "B: $B"
echo "command: $CMD"
if [ "$MODE" = together ]; then
    echo "mode: together (A and B at the same moment on cpus $CPU0 and $CPU1, swapped every repetition)"
else
    echo "mode: alternate (back to back on cpu $CPU: A B, B A, ...)"
fi
i=0 prev=""
: >"$TMP/ratios"
while [ $i -lt "$REPS" ]; do
    if [ "$MODE" = together ]; then
        if [ $((i % 2)) = 0 ]; then ca=$CPU0 cb=$CPU1; else ca=$CPU1 cb=$CPU0; fi
        one "$ca" "$A" "$TMP/a" &
        pa=$!
        one "$cb" "$B" "$TMP/b" &
        pb=$!
        wait $pa || exit 1
        wait $pb || exit 1
        how="A cpu $ca, B cpu $cb"
    elif [ $((i % 2)) = 0 ]; then # A B, then B A: each quartet is symmetric in time
        one "$CPU" "$A" "$TMP/a" && one "$CPU" "$B" "$TMP/b" || exit 1
        how="A then B"
    else
        one "$CPU" "$B" "$TMP/b" && one "$CPU" "$A" "$TMP/a" || exit 1
        how="B then A"
    fi
    ta=$(cpu_secs "$TMP/a") tb=$(cpu_secs "$TMP/b")
    case "$ta $tb" in "0.00 "* | *" 0.00") die "a run took 0.00 s of cpu: too short to time (give AB_CMD more work)" ;; esac
    r=$(awk -v a="$ta" -v b="$tb" 'BEGIN { printf "%.4f", b / a }')
    printf 'rep %2d (%s): A %ss  B %ss  B/A %s\n' $((i + 1)) "$how" "$ta" "$tb" "$r"
    if [ $((i % 2)) = 1 ]; then
        awk -v x="$prev" -v y="$r" 'BEGIN { printf "%.4f\n", sqrt(x * y) }' >>"$TMP/ratios"
    fi
    prev=$r
    i=$((i + 1))
done
sort -n "$TMP/ratios" | awk '{ v[NR] = $1; l += log($1) }
    END {
        m = NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2
        printf "pairs of repetitions: %d; B/A median %.3f, geometric mean %.3f, range %.3f-%.3f\n",
            NR, m, exp(l / NR), v[1], v[NR]
    }'
