#!/bin/sh
# heapprof cost model: what the shim costs a program in instructions and simulated cache misses
# (valgrind's cachegrind), which do not depend on how busy the machine is. Timings on a shared
# host drift by up to 2x between runs (docs/PERFORMANCE.md); this is the steady yardstick for
# comparing two builds. It is a model, not a timing: read its ratios beside `make bench`'s.
# Usage: sh bench/model.sh            (from the repository root; `make bench-model` runs it)
# Knobs (environment):
#   MODEL_WORKLOADS="python3 ab1 ab1-nofp"   (also: sqlite3, slow under valgrind)
#   MODEL_CONFIGS="bare shim shim-fp shim-p0" (shim-p0: profile=0, headers only)
#   MODEL_PY_ROUNDS=2 MODEL_EVENTS=100000
# cost = instructions + 12 x (first-level misses) + 40 x (second-level misses), with the caches
# of the benchmark machine: 32 KiB 8-way L1i and L1d, 1 MiB 16-way L2 (64-byte lines).
# Mispredicted branches (cachegrind's simple predictor, far weaker than a real processor's) are
# shown beside it, not counted in it.
set -u

ROOT=$(pwd)
OUT=$ROOT/build/bench
SHIM=$ROOT/build/libheapprof_shim.so
WORKLOADS=${MODEL_WORKLOADS:-"python3 ab1 ab1-nofp"}
CONFIGS=${MODEL_CONFIGS:-"bare shim shim-fp shim-p0"}
ROUNDS=${MODEL_PY_ROUNDS:-2}
EVENTS=${MODEL_EVENTS:-100000}

die() { echo "bench/model: $*" >&2; exit 1; }

[ -f bench/alloc_bench.c ] || die "run from the repository root (bench/alloc_bench.c not found)"
[ -f "$SHIM" ] || die "$SHIM is missing: build it first (make shim)"
command -v valgrind >/dev/null 2>&1 || die "valgrind is missing (apt-get install valgrind)"
mkdir -p "$OUT" || die "cannot create $OUT"
TMP=$(mktemp -d "${TMPDIR:-/tmp}/heapprof-model.XXXXXX") || die "mktemp failed"
trap 'rm -rf "$TMP"' EXIT
cp "$SHIM" "$TMP/shim.so" || die "cannot copy $SHIM"

sh bench/build.sh "$OUT" || exit 1

# model WORKLOAD CONFIG: prints "instructions l1i_misses l1d_misses ll_misses"
model() {
    wl=$1 cfg=$2 in=/dev/null wenv=""
    case $wl in
    python3) wenv="PYTHONMALLOC=malloc PYTHONHASHSEED=0"
        set -- /usr/bin/python3 "$ROOT/bench/py_workload.py" "$ROUNDS" ;;
    ab1) set -- "$OUT/alloc_bench" -q -t 1 -n "$EVENTS" ;;
    ab1-nofp) set -- "$OUT/alloc_bench_nofp" -q -t 1 -n "$EVENTS" ;;
    sqlite3) set -- sqlite3 :memory: ; in=$ROOT/bench/sqlite_workload.sql ;;
    *) die "unknown workload '$wl'" ;;
    esac
    case $cfg in
    bare) pre="" opts="" ;;
    shim) pre=$TMP/shim.so opts="" ;;
    shim-fp) pre=$TMP/shim.so opts=":unwinder=fp" ;;
    shim-p0) pre=$TMP/shim.so opts=":profile=0" ;;
    *) die "unknown configuration '$cfg'" ;;
    esac
    log=$TMP/$wl.$cfg.log
    # The environment is set outside valgrind: it follows no exec (of env, say) by default.
    env $wenv ${pre:+LD_PRELOAD=$pre} HEAPPROF_OPTIONS="output=$TMP/%p.hpf$opts" \
        valgrind --tool=cachegrind --cache-sim=yes --branch-sim=yes --I1=32768,8,64 --D1=32768,8,64 \
        --LL=1048576,16,64 --cachegrind-out-file=/dev/null "$@" <"$in" >/dev/null 2>"$log" ||
        { mkdir -p "$OUT/logs" && cp "$log" "$OUT/logs/model.$wl.$cfg.log"; echo "FAILED"; return; }
    rm -f "$TMP"/*.hpf
    awk '/ I +refs:/ {gsub(",", "", $4); ir=$4}
         / I1 +misses:/ {gsub(",", "", $4); i1=$4}
         / D1 +misses:/ {gsub(",", "", $4); d1=$4}
         / LL misses:/ {gsub(",", "", $4); ll=$4}
         / Mispredicts:/ {gsub(",", "", $3); mp=$3}
         END {print ir, i1, d1, ll, mp + 0}' "$log"
}

echo "heapprof cost model, $(date -u '+%Y-%m-%d %H:%M') UTC, shim md5 $(md5sum "$SHIM" | cut -c1-12)," \
    "tree at $(git rev-parse --short HEAD 2>/dev/null || echo '?')"
echo "python3: $ROUNDS rounds; alloc_bench: $EVENTS events; millions; ratio = cost / bare cost"
echo "(valgrind offers no rseq area and no vDSO: the shim pays ~110 more instructions per"
echo " allocation there for the cpu id and the clock than in a real run)"
printf '%-9s %-8s %9s %8s %8s %8s %9s %7s %8s\n' workload config instr L1i L1d L2 cost ratio mispred
for wl in $WORKLOADS; do
    base=""
    for cfg in $CONFIGS; do
        r=$(model "$wl" "$cfg")
        if [ "$r" = FAILED ]; then
            printf '%-9s %-8s FAILED (log: build/bench/logs/model.%s.%s.log)\n' "$wl" "$cfg" "$wl" "$cfg"
            continue
        fi
        set -- $r
        cost=$(awk -v ir="$1" -v i1="$2" -v d1="$3" -v ll="$4" 'BEGIN {printf "%.0f", ir + 12 * (i1 + d1) + 40 * ll}')
        [ "$cfg" = bare ] && base=$cost
        ratio=$( [ -n "$base" ] && awk -v c="$cost" -v b="$base" 'BEGIN {printf "%.2fx", c / b}' || echo "-")
        awk -v w="$wl" -v c="$cfg" -v ir="$1" -v i1="$2" -v d1="$3" -v ll="$4" -v co="$cost" -v ra="$ratio" -v mp="$5" \
            'BEGIN {printf "%-9s %-8s %9.1f %8.2f %8.2f %8.2f %9.1f %7s %8.2f\n", w, c, ir/1e6, i1/1e6, d1/1e6, ll/1e6, co/1e6, ra, mp/1e6}'
    done
done
