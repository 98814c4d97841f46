#!/bin/sh
# heapprof fork benchmark (by hand; not part of make bench): what a forked child costs under the
# shim, where every child writes a profile of its own and copies the pages of the shim's
# metadata it writes (copy-on-write), next to the bare program and the shim's headers alone
# (profile=0). Two workloads:
#   shell: bash running 200 command substitutions, x=$(echo $i): 200 forked children that
#          run a builtin and exit (configure scripts and make recipes look like this);
#   busy:  bench/fork_busy.c: 4 threads allocate while the main thread forks 100 children
#          that allocate, start a thread and _exit.
# Runs bare, the shim and profile=0 in turn, REPS times (default 5), and prints the median wall
# time of each and its ratio to bare's. Usage, from the repository root after make:
#   sh bench/forks.sh [REPS]            (FORKS_SHIM: another shim library)
set -u

die() { echo "bench/forks: $*" >&2; exit 1; }

REPS=${1:-5}
case $REPS in '' | *[!0-9]*) die "REPS must be a number, not '$REPS'" ;; esac
[ "$REPS" -gt 0 ] || die "REPS must be positive"
ROOT=$(pwd)
SHIM=${FORKS_SHIM:-$ROOT/build/libheapprof_shim.so}
[ -f "$SHIM" ] || die "no $SHIM: run make first"
command -v bash >/dev/null 2>&1 || die "bash is missing"
TMP=$(mktemp -d "${TMPDIR:-/tmp}/heapprof-forks.XXXXXX") || die "mktemp failed"
trap 'rm -rf "$TMP"' EXIT INT TERM
cc -O2 -pthread -o "$TMP/fork_busy" "$ROOT/bench/fork_busy.c" || die "cannot build bench/fork_busy.c"
cat >"$TMP/shell.sh" <<'EOF'
for i in $(seq 200); do x=$(echo $i); done
EOF

# run WORKLOAD CONFIG: one run; prints its wall time in seconds.
run() {
    rm -rf "$TMP/out"
    mkdir "$TMP/out"
    case $1 in
    shell) set -- "$2" bash "$TMP/shell.sh" ;;
    busy) set -- "$2" "$TMP/fork_busy" ;;
    esac
    cfg=$1
    shift
    t0=$(date +%s%N)
    case $cfg in
    bare) "$@" >/dev/null ;;
    shim) LD_PRELOAD=$SHIM HEAPPROF_OPTIONS="output=$TMP/out/p.%p.hpf" "$@" >/dev/null ;;
    p0) LD_PRELOAD=$SHIM HEAPPROF_OPTIONS="output=:profile=0" "$@" >/dev/null ;;
    esac || die "$cfg run of $* failed"
    t1=$(date +%s%N)
    echo $(((t1 - t0) / 1000)) # microseconds
}

median() { sort -n | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }

printf '%-8s %-12s %-20s %-20s\n' workload bare "shim (default)" "shim profile=0"
for wl in shell busy; do
    for cfg in bare shim p0; do : >"$TMP/$wl.$cfg"; done
    i=0
    while [ $i -lt "$REPS" ]; do
        for cfg in bare shim p0; do run $wl $cfg >>"$TMP/$wl.$cfg"; done
        i=$((i + 1))
    done
    b=$(median <"$TMP/$wl.bare") s=$(median <"$TMP/$wl.shim") p=$(median <"$TMP/$wl.p0")
    awk -v wl=$wl -v b="$b" -v s="$s" -v p="$p" 'BEGIN {
        printf "%-8s %-12s %-20s %-20s\n", wl, sprintf("%.3fs", b / 1e6),
            sprintf("%.3fs %.2fx", s / 1e6, s / b), sprintf("%.3fs %.2fx", p / 1e6, p / b) }'
done
echo "(median wall time of $REPS runs each, run in turn; shim: $SHIM)"
