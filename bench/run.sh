#!/bin/sh
# heapprof benchmarks: times each workload bare, under the shim (fp and libunwind unwinders) and
# under heaptrack, in the same run, and prints ratios, peak RSS and profile sizes.
# Usage: sh bench/run.sh [--no-shim]     (from the repository root; `make bench` runs it)
# Knobs (environment): BENCH_REPS=3 BENCH_EVENTS=5000000 BENCH_TIMEOUT=300
#   BENCH_WORKLOADS="ab1 ab2 ab1-nofp ab2-nofp sqlite3 python3"
#   BENCH_CONFIGS="bare shim shim-fp shim-lu shim-p0 heaptrack heaptrack-raw"  (shim: default
#   unwinder; shim-p0: profile=0, the headers and entry points without profiling)
#   BENCH_HT_VMEM_KB=4194304 (address-space cap for heaptrack runs: its interpreter can run away)
#   BENCH_AB_REPS=10 (runs each of bare and the shim back to back on one cpu in A B B A order,
#   bench/ab.sh, for each single-threaded workload after the rest; even; 0: none)
# Results: the tables go to stdout and build/bench/results.txt; logs of failed runs to
# build/bench/logs/. Timings are wall seconds, best of BENCH_REPS; RSS is from the best run.
set -u

ROOT=$(pwd)
OUT=$ROOT/build/bench
SHIM=$ROOT/build/libheapprof_shim.so
REPORT=$ROOT/build/heapprof-report
REPS=${BENCH_REPS:-3}
EVENTS=${BENCH_EVENTS:-5000000}
TIMEOUT=${BENCH_TIMEOUT:-300}
WORKLOADS=${BENCH_WORKLOADS:-"ab1 ab2 ab1-nofp ab2-nofp sqlite3 python3"}
CONFIGS=${BENCH_CONFIGS:-"bare shim shim-fp shim-lu shim-p0 heaptrack heaptrack-raw"}
HT_VMEM_KB=${BENCH_HT_VMEM_KB:-4194304}
AB_REPS=${BENCH_AB_REPS:-10}
PY=/usr/bin/python3

die() { echo "bench: $*" >&2; exit 1; }

case $AB_REPS in '' | *[!0-9]*) die "BENCH_AB_REPS must be a number" ;; esac
[ $((AB_REPS % 2)) = 0 ] || die "BENCH_AB_REPS must be even (bench/ab.sh runs repetitions in pairs)"

USE_SHIM=1
for a in "$@"; do
    case $a in
    --no-shim) USE_SHIM=0 ;;
    *) die "unknown argument '$a' (usage: sh bench/run.sh [--no-shim])" ;;
    esac
done

[ -f bench/alloc_bench.c ] || die "run from the repository root (bench/alloc_bench.c not found)"
if [ $USE_SHIM = 1 ]; then
    [ -f "$SHIM" ] || die "$SHIM is missing: build it first (make shim), or pass --no-shim to measure only bare and heaptrack"
else
    CONFIGS=$(echo " $CONFIGS " | sed 's/ shim-lu / /; s/ shim-fp / /; s/ shim-p0 / /; s/ shim / /')
    CONFIGS=$(echo $CONFIGS)
fi
for tool in /usr/bin/time timeout awk date; do
    command -v $tool >/dev/null 2>&1 || die "$tool is missing (Debian packages: time, coreutils, gawk/mawk)"
done
case " $WORKLOADS " in *" sqlite3 "*) command -v sqlite3 >/dev/null 2>&1 || die "sqlite3 is missing (apt-get install sqlite3)" ;; esac
case " $WORKLOADS " in *" python3 "*) [ -x $PY ] || die "$PY is missing (apt-get install python3)" ;; esac
case " $CONFIGS " in *" heaptrack"*) command -v heaptrack >/dev/null 2>&1 || die "heaptrack is missing (apt-get install heaptrack), or set BENCH_CONFIGS without it" ;; esac

mkdir -p "$OUT/logs" || die "cannot create $OUT"
rm -f "$OUT"/logs/*.log
TMP=$(mktemp -d "${TMPDIR:-/tmp}/heapprof-bench.XXXXXX") || die "mktemp failed"
CHILD=""
trap 'rm -rf "$TMP"' EXIT
# timeout leads its own process group and passes a signal on to all of it, so killing it stops
# the measured program (and heaptrack's helpers) too.
trap '[ -z "$CHILD" ] || kill -TERM "$CHILD" 2>/dev/null; exit 130' INT TERM
RES=$TMP/results
mkdir -p "$RES"
# Others may rebuild the shim while this runs: every run preloads one private copy.
SHIM_ID="not used"
if [ $USE_SHIM = 1 ]; then
    cp "$SHIM" "$TMP/libheapprof_shim.so" || die "cannot copy $SHIM"
    SHIM_ID="md5 $(md5sum "$SHIM" | cut -c1-12), built $(date -r "$SHIM" '+%Y-%m-%d %H:%M'),"
    SHIM_ID="$SHIM_ID tree at $(git rev-parse --short HEAD 2>/dev/null || echo '?')"
    SHIM=$TMP/libheapprof_shim.so
fi

# ---- build the allocation benchmark: with frame pointers, and without ----
sh bench/build.sh "$OUT" || exit 1

# ---- workloads: wl_setup NAME sets WL_ENV (env assignments), WL_CMD (argv), WL_IN (stdin) ----
wl_setup() {
    WL_ENV="" WL_IN=/dev/null
    case $1 in
    ab1) WL_CMD="$OUT/alloc_bench -q -t 1 -n $EVENTS" ;;
    ab2) WL_CMD="$OUT/alloc_bench -q -t 2 -n $EVENTS" ;;
    ab1-nofp) WL_CMD="$OUT/alloc_bench_nofp -q -t 1 -n $EVENTS" ;;
    ab2-nofp) WL_CMD="$OUT/alloc_bench_nofp -q -t 2 -n $EVENTS" ;;
    sqlite3) WL_CMD="sqlite3 :memory:" WL_IN=$ROOT/bench/sqlite_workload.sql ;;
    python3) WL_ENV="PYTHONMALLOC=malloc PYTHONHASHSEED=0" WL_CMD="$PY $ROOT/bench/py_workload.py" ;;
    *) die "unknown workload '$1'" ;;
    esac
}

wl_describe() {
    case $1 in
    ab1) echo "alloc_bench, frame pointers, 1 thread, $EVENTS events" ;;
    ab2) echo "alloc_bench, frame pointers, 2 threads, $EVENTS events each" ;;
    ab1-nofp) echo "alloc_bench, no frame pointers, 1 thread" ;;
    ab2-nofp) echo "alloc_bench, no frame pointers, 2 threads" ;;
    sqlite3) echo "sqlite3 :memory: < bench/sqlite_workload.sql (200k rows, indexes, queries)" ;;
    python3) echo "PYTHONMALLOC=malloc python3 bench/py_workload.py (dicts, lists, strings, json)" ;;
    esac
}

# run_once WORKLOAD CONFIG REP: one timed run; appends "wall_secs rss_kb profile_bytes cpu_secs"
# to $RES/WORKLOAD.CONFIG, or writes $RES/WORKLOAD.CONFIG.fail with the reason. After the first
# good shim run, $RES/WORKLOAD.CONFIG.stats says what its profile recorded (bench/profile_stats.py).
run_once() {
    wl=$1 cfg=$2 rep=$3
    wl_setup "$wl"
    dir=$TMP/run.$wl.$cfg.$rep
    log=$OUT/logs/$wl.$cfg.$rep.log
    mkdir -p "$dir"
    case $cfg in
    bare) set -- env $WL_ENV $WL_CMD ;;
    shim) set -- env $WL_ENV LD_PRELOAD="$SHIM" HEAPPROF_OPTIONS="output=$dir/%p.hpf" $WL_CMD ;;
    shim-fp) set -- env $WL_ENV LD_PRELOAD="$SHIM" \
        HEAPPROF_OPTIONS="output=$dir/%p.hpf:unwinder=fp" $WL_CMD ;;
    shim-lu) set -- env $WL_ENV LD_PRELOAD="$SHIM" \
        HEAPPROF_OPTIONS="output=$dir/%p.hpf:unwinder=libunwind" $WL_CMD ;;
    shim-p0) set -- env $WL_ENV LD_PRELOAD="$SHIM" HEAPPROF_OPTIONS="output=:profile=0" $WL_CMD ;;
    heaptrack) set -- sh -c 'ulimit -v "$0" && exec "$@"' "$HT_VMEM_KB" \
        env $WL_ENV heaptrack -o "$dir/ht" $WL_CMD ;;
    heaptrack-raw) set -- sh -c 'ulimit -v "$0" && exec "$@"' "$HT_VMEM_KB" \
        env $WL_ENV heaptrack -r -o "$dir/ht" $WL_CMD ;;
    *) die "unknown config '$cfg'" ;;
    esac
    t0=$(date +%s%N)
    timeout -k 5 "$TIMEOUT" /usr/bin/time -f "%M %U %S" -o "$dir/.rss" "$@" <"$WL_IN" >"$log" 2>&1 &
    CHILD=$!
    wait "$CHILD"
    rc=$?
    CHILD=""
    t1=$(date +%s%N)
    secs=$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.3f", (b - a) / 1e9 }')
    last=$(tail -n 1 "$dir/.rss" 2>/dev/null)
    rss=$(echo "$last" | awk '{ print $1 + 0 }')
    cpu=$(echo "$last" | awk '{ printf "%.2f", $2 + $3 }')
    size=$(find "$dir" -type f ! -name .rss -printf '%s\n' | awk '{ n += $1 } END { print n + 0 }')
    nfiles=$(find "$dir" -type f ! -name .rss | wc -l)
    reason=""
    if [ $rc = 124 ] || [ $rc = 137 ]; then
        reason="timeout after ${TIMEOUT}s"
    elif [ $rc != 0 ]; then
        reason="exit status $rc"
    elif [ "$cfg" != bare ] && [ "$cfg" != shim-p0 ] && [ "$nfiles" = 0 ]; then
        reason="no profile written"
    fi
    if [ -n "$reason" ]; then
        echo "$reason (log: ${log#$ROOT/})" >"$RES/$wl.$cfg.fail"
        printf '  %-9s %-14s rep %s: FAILED: %s\n' "$wl" "$cfg" "$rep" "$reason" >&2
    else
        echo "$secs $rss $size $cpu" >>"$RES/$wl.$cfg"
        rm -f "$log"
        printf '  %-9s %-14s rep %s: %6ss wall %6ss cpu %7s KB RSS %10s B profile\n' "$wl" "$cfg" \
            "$rep" "$secs" "$cpu" "$rss" "$size" >&2
        case $cfg in shim-p0) ;; shim*)
            if [ ! -f "$RES/$wl.$cfg.stats" ] && [ -x "$REPORT" ]; then
                "$REPORT" -f json "$dir"/*.hpf 2>/dev/null | $PY "$ROOT/bench/profile_stats.py" \
                    >"$RES/$wl.$cfg.stats" 2>/dev/null || rm -f "$RES/$wl.$cfg.stats"
            fi ;;
        esac
    fi
    rm -rf "$dir"
}

# ---- measure: repetitions outermost so slow drift in machine load hits every config alike ----
LOAD0=$(cut -d' ' -f1-3 /proc/loadavg)
START=$(date +%s)
STARTED=$(date '+%Y-%m-%d %H:%M %Z')
echo "bench: $REPS repetition(s); workloads: $WORKLOADS; configs: $CONFIGS" >&2
rep=1
while [ $rep -le "$REPS" ]; do
    for wl in $WORKLOADS; do
        for cfg in $CONFIGS; do
            # A run that failed once is not retried: the known failure (heaptrack's interpreter
            # on alloc_bench) is deterministic, and a runaway heaptrack costs minutes.
            [ -f "$RES/$wl.$cfg.fail" ] || run_once "$wl" "$cfg" "$rep"
        done
    done
    rep=$((rep + 1))
done
# ---- back to back: bare and the shim alternating on one cpu (bench/ab.sh), A B B A, so the
# host's drift hits both alike; single-threaded workloads only (one cpu) ----
ab_ok() {
    [ $USE_SHIM = 1 ] && [ "$AB_REPS" -gt 0 ] || return 1
    command -v taskset >/dev/null 2>&1 || return 1
    case " $CONFIGS " in *" shim "*) ;; *) return 1 ;; esac
    case $1 in ab2*) return 1 ;; esac
}
for wl in $WORKLOADS; do
    ab_ok "$wl" || continue
    wl_setup "$wl"
    echo "bench: $wl, bare and shim back to back ($AB_REPS runs each)" >&2
    AB_CMD="env $WL_ENV $WL_CMD" AB_STDIN=$WL_IN sh "$ROOT/bench/ab.sh" bare "$SHIM" "$AB_REPS" \
        >"$RES/$wl.ab" 2>&1 || echo "bench/ab.sh failed: $(tail -n 3 "$RES/$wl.ab" | tr '\n' ' ')" >"$RES/$wl.ab.fail"
done
LOAD1=$(cut -d' ' -f1-3 /proc/loadavg)
ELAPSED=$(($(date +%s) - START))

# ---- report ----
# best WL CFG -> "secs rss size" of the fastest run, or "FAIL" or "-" (not run)
best() {
    if [ -f "$RES/$1.$2.fail" ]; then
        echo FAIL
    elif [ -f "$RES/$1.$2" ]; then
        sort -n "$RES/$1.$2" | head -n 1
    else
        echo -
    fi
}
field() { echo "$1" | awk -v i="$2" '{ print $i }'; }

# cell_ratio WL CFG FIELD [LIMIT]: field FIELD (1: wall, 4: cpu seconds) of the fastest run and
# its ratio to bare's, e.g. "1.234s  2.10x". With a LIMIT (the wall-time target) the cell is
# marked OVER above it, or "short" when the profile averages under 3 frames per allocation (the
# fp unwinder through code without frame pointers): the targets are for full stacks.
cell_ratio() {
    b=$(best "$1" "$2")
    case $b in
    FAIL) echo "FAILED" ; return ;;
    -) case $USE_SHIM.$2 in 0.shim*) echo "not yet measured" ;; *) echo "-" ;; esac
       return ;;
    esac
    base=$(best "$1" bare)
    case $base in FAIL | -) echo "$(field "$b" "$3")s" ; return ;; esac
    fr=-1
    [ -n "${4:-}" ] && [ -s "$RES/$1.$2.stats" ] && fr=$(awk '{ print $3 }' "$RES/$1.$2.stats")
    awk -v t="$(field "$b" "$3")" -v b0="$(field "$base" "$3")" -v lim="${4:-}" -v fr="$fr" 'BEGIN {
        if (b0 <= 0) { printf "%.2fs\n", t; exit }
        r = t / b0; s = sprintf("%.2fs %5.2fx", t, r)
        if (lim != "" && fr >= 0 && fr < 3) s = s " short"
        else if (lim != "" && r > lim) s = s " OVER"
        print s }'
}
cell_time() { cell_ratio "$1" "$2" 1 "$3"; }
cell_cpu() { cell_ratio "$1" "$2" 4; }

# cell_paired WL CFG: the median over repetitions of (wall time / bare wall time of the same
# repetition), with the smallest and largest. Each repetition runs bare and every config back to
# back, so a pair shares the machine's state; on a machine whose speed drifts (shared hosts),
# this says more than the ratio of best times, which pits the luckiest bare run against the
# luckiest other one.
cell_paired() {
    if [ -f "$RES/$1.$2.fail" ] || [ -f "$RES/$1.bare.fail" ] || [ ! -s "$RES/$1.$2" ] ||
        [ ! -s "$RES/$1.bare" ]; then
        echo "-"
        return
    fi
    paste -d' ' "$RES/$1.bare" "$RES/$1.$2" | awk 'NF == 8 && $1 > 0 { print $5 / $1 }' | sort -n |
        awk '{ r[NR] = $1 }
             END {
                 if (NR == 0) { print "-"; exit }
                 m = (NR % 2) ? r[(NR + 1) / 2] : (r[NR / 2] + r[NR / 2 + 1]) / 2
                 printf "%.2fx (%.2f-%.2f)", m, r[1], r[NR] }'
}

# cell_stats WL CFG: "contexts, mean frames, allocations without a stack" of the profile
cell_stats() {
    f=$RES/$1.$2.stats
    if [ -s "$f" ]; then
        awk '{ printf "%d ctx, %.1f frames, %d no stack", $1, $3, $4 }' "$f"
    elif [ $USE_SHIM = 0 ]; then
        echo "not yet measured"
    else
        echo "-"
    fi
}

human() {
    awk -v n="$1" 'BEGIN {
        if (n >= 1048576) printf "%.1f MB", n / 1048576
        else if (n >= 1024) printf "%.0f KB", n / 1024
        else printf "%d B", n }'
}

cell_rss() {
    b=$(best "$1" "$2")
    case $b in FAIL) echo FAILED ;; -) echo - ;; *) human $(($(field "$b" 2) * 1024)) ;; esac
}

cell_size() {
    b=$(best "$1" "$2")
    case $b in FAIL) echo FAILED ;; -) echo - ;; *) human "$(field "$b" 3)" ;; esac
}

target() {
    case $1 in ab*) echo 3 ;; sqlite3 | python3) echo 1.5 ;; esac
}

# scaling CFG BASE1 BASE2: wall time of the 2-thread run over the 1-thread run
scaling() {
    a=$(best "$2" "$1") b=$(best "$3" "$1")
    case "$a $b" in *FAIL* | *-*) echo "-" ; return ;; esac
    awk -v x="$(field "$a" 1)" -v y="$(field "$b" 1)" 'BEGIN { printf "%.2f", y / x }'
}

{
    echo "heapprof benchmarks, started $STARTED"
    echo "machine: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'), $(nproc) CPUs," \
        "$(awk '/MemTotal/ { printf "%.0f GB", $2 / 1048576 }' /proc/meminfo) RAM, kernel $(uname -r)"
    echo "software: $(ldd --version | head -n 1 | sed 's/.*) //;s/^/glibc /'), $(${CC:-gcc} --version | head -n 1)," \
        "sqlite3 $(sqlite3 --version 2>/dev/null | cut -d' ' -f1), $($PY --version 2>&1)," \
        "$(heaptrack --version 2>/dev/null | head -n 1)"
    echo "shim: $SHIM_ID"
    echo "best of $REPS, wall seconds; ratio = time / bare time of the same workload"
    echo "targets, with full stacks: shim <= 3x on alloc_bench (ab*), <= 1.5x on sqlite3 and python3;"
    echo "OVER marks a miss; short: under 3 frames per allocation recorded, not judged"
    echo "load average before: $LOAD0, after: $LOAD1; measuring took ${ELAPSED}s"
    echo
    printf '%-9s | %-7s | %-19s | %-19s | %-19s | %-17s | %-17s\n' workload bare \
        "shim (default)" "shim unwinder=fp" shim+libunwind heaptrack "heaptrack -r"
    printf '%s\n' "----------+---------+---------------------+---------------------+---------------------+-------------------+------------------"
    for wl in $WORKLOADS; do
        b=$(best "$wl" bare)
        case $b in FAIL | -) bt=$b ;; *) bt="$(field "$b" 1)s" ;; esac
        printf '%-9s | %-7s | %-19s | %-19s | %-19s | %-17s | %-17s\n' "$wl" "$bt" \
            "$(cell_time "$wl" shim "$(target "$wl")")" "$(cell_time "$wl" shim-fp "$(target "$wl")")" \
            "$(cell_time "$wl" shim-lu "$(target "$wl")")" \
            "$(cell_time "$wl" heaptrack "")" "$(cell_time "$wl" heaptrack-raw "")"
    done
    echo
    echo "paired wall ratios: median over the $REPS repetitions of time / bare time of the same"
    echo "repetition (smallest-largest); steadier than the ratio of best times when the machine's"
    echo "speed drifts"
    printf '%-9s | %-19s | %-19s | %-19s | %-19s | %-19s\n' workload \
        "shim (default)" "shim unwinder=fp" shim+libunwind heaptrack "heaptrack -r"
    printf '%s\n' "----------+---------------------+---------------------+---------------------+---------------------+--------------------"
    for wl in $WORKLOADS; do
        printf '%-9s | %-19s | %-19s | %-19s | %-19s | %-19s\n' "$wl" \
            "$(cell_paired "$wl" shim)" "$(cell_paired "$wl" shim-fp)" "$(cell_paired "$wl" shim-lu)" \
            "$(cell_paired "$wl" heaptrack)" "$(cell_paired "$wl" heaptrack-raw)"
    done
    if [ -n "$(ls "$RES" | grep -E '\.ab(\.fail)?$')" ]; then
        echo
        echo "back to back (bench/ab.sh): bare and the shim (default) alternate on one cpu, A B B A;"
        echo "median over the pairs of repetitions (A B + B A) of the shim's CPU time over bare's"
        echo "(smallest-largest). The least disturbed figure on a host whose speed drifts; OVER: a miss"
        printf '%-9s | %-28s\n' workload "shim (default)"
        printf '%s\n' "----------+-----------------------------"
        for wl in $WORKLOADS; do
            if [ -f "$RES/$wl.ab.fail" ]; then
                printf '%-9s | %s\n' "$wl" "FAILED ($(cat "$RES/$wl.ab.fail"))"
            elif [ -f "$RES/$wl.ab" ]; then
                printf '%-9s | %s\n' "$wl" "$(awk -v lim="$(target "$wl")" '/^pairs of repetitions:/ {
                    gsub(/[;,]/, ""); s = sprintf("%.2fx (%s) %s pairs", $7, $12, $4)
                    if (lim != "" && $7 + 0 > lim) s = s " OVER"
                    print s }' "$RES/$wl.ab")"
            fi
        done
    fi
    echo
    echo "CPU time (user+sys of all processes, best of $REPS); less disturbed by other load than wall"
    printf '%-9s | %-7s | %-19s | %-19s | %-19s | %-17s | %-17s\n' workload bare \
        "shim (default)" "shim unwinder=fp" shim+libunwind heaptrack "heaptrack -r"
    printf '%s\n' "----------+---------+---------------------+---------------------+---------------------+-------------------+------------------"
    for wl in $WORKLOADS; do
        b=$(best "$wl" bare)
        case $b in FAIL | -) bt=$b ;; *) bt="$(field "$b" 4)s" ;; esac
        printf '%-9s | %-7s | %-19s | %-19s | %-19s | %-17s | %-17s\n' "$wl" "$bt" \
            "$(cell_cpu "$wl" shim)" "$(cell_cpu "$wl" shim-fp)" "$(cell_cpu "$wl" shim-lu)" \
            "$(cell_cpu "$wl" heaptrack)" "$(cell_cpu "$wl" heaptrack-raw)"
    done
    case " $CONFIGS " in *" shim-p0 "*)
        echo
        echo "headers only (profile=0): the shim's 32-byte headers and entry points without any"
        echo "profiling, the floor under every profiled figure above (best wall, paired wall, best CPU)"
        printf '%-9s | %-19s | %-19s | %-19s\n' workload "wall (best)" "wall (paired)" "CPU (best)"
        printf '%s\n' "----------+---------------------+---------------------+--------------------"
        for wl in $WORKLOADS; do
            printf '%-9s | %-19s | %-19s | %-19s\n' "$wl" "$(cell_time "$wl" shim-p0 "")" \
                "$(cell_paired "$wl" shim-p0)" "$(cell_cpu "$wl" shim-p0)"
        done ;;
    esac
    echo
    echo "stacks recorded by the shim (first good run): distinct contexts, mean frames per"
    echo "allocation, allocations without a stack"
    printf '%-9s | %-34s | %-34s | %-34s\n' workload "shim (default)" "shim unwinder=fp" "shim+libunwind"
    printf '%s\n' "----------+------------------------------------+------------------------------------+-----------------------------------"
    for wl in $WORKLOADS; do
        printf '%-9s | %-34s | %-34s | %-34s\n' "$wl" "$(cell_stats "$wl" shim)" \
            "$(cell_stats "$wl" shim-fp)" "$(cell_stats "$wl" shim-lu)"
    done
    echo
    echo "peak RSS (max RSS of the largest process; for heaptrack that may be its interpreter)" \
        "and profile size"
    printf '%-9s | %-9s | %-9s | %-9s | %-9s | %-9s | %-9s | %-9s | %-9s | %-9s | %-9s\n' \
        workload "RSS bare" "RSS shim" "RSS s+fp" "RSS s+lu" "RSS ht" \
        "prof shim" "prof s+fp" "prof s+lu" "heaptrack" "ht -r"
    printf '%s\n' "----------+-----------+-----------+-----------+-----------+-----------+-----------+-----------+-----------+-----------+----------"
    for wl in $WORKLOADS; do
        printf '%-9s | %-9s | %-9s | %-9s | %-9s | %-9s | %-9s | %-9s | %-9s | %-9s | %-9s\n' \
            "$wl" "$(cell_rss "$wl" bare)" "$(cell_rss "$wl" shim)" "$(cell_rss "$wl" shim-fp)" \
            "$(cell_rss "$wl" shim-lu)" "$(cell_rss "$wl" heaptrack)" "$(cell_size "$wl" shim)" \
            "$(cell_size "$wl" shim-fp)" "$(cell_size "$wl" shim-lu)" "$(cell_size "$wl" heaptrack)" \
            "$(cell_size "$wl" heaptrack-raw)"
    done
    echo
    echo "thread scaling: 2-thread wall time / 1-thread wall time (each thread does the same work;"
    echo "1.00 is perfect scaling on 2 cores)"
    printf '%-10s | %-5s | %-5s | %-7s | %-7s | %-9s | %-12s\n' binary bare shim shim+fp shim+lu \
        heaptrack "heaptrack -r"
    for v in "" -nofp; do
        case " $WORKLOADS " in *" ab1$v "*) ;; *) continue ;; esac
        case " $WORKLOADS " in *" ab2$v "*) ;; *) continue ;; esac
        printf '%-10s | %-5s | %-5s | %-7s | %-7s | %-9s | %-12s\n' "ab$v" \
            "$(scaling bare ab1$v ab2$v)" "$(scaling shim ab1$v ab2$v)" "$(scaling shim-fp ab1$v ab2$v)" \
            "$(scaling shim-lu ab1$v ab2$v)" "$(scaling heaptrack ab1$v ab2$v)" \
            "$(scaling heaptrack-raw ab1$v ab2$v)"
    done
    echo
    echo "workloads:"
    for wl in $WORKLOADS; do echo "  $wl: $(wl_describe "$wl")"; done
    fails=$(ls "$RES" | grep '\.fail$')
    if [ -n "$fails" ]; then
        echo
        echo "failures:"
        for f in $fails; do echo "  ${f%.fail}: $(cat "$RES/$f")"; done
    fi
} | tee "$OUT/results.txt"
