#!/bin/bash
# Instructions (valgrind's cachegrind, every process of the run) of access profiling in callback
# builds: access_bench and alloc_bench built by a tree's heapprof-cc --callbacks and run under
# that tree's shim, with per-word histograms (the default) and without (access_word_hist_max=0),
# and alloc_bench built inline. Instruction counts do not drift with the host's load as times do
# (docs/PERFORMANCE.md, "Per-word histograms"); they repeat within about 2% (the shim's clock and
# cpu reads take other paths from run to run).
# Usage: bench/access_ir.sh [TREE...]   (default: this tree; each TREE built with make and make rt)
# Not part of make check.
set -eu
cd "$(dirname "$0")/.."
[ $# -gt 0 ] || set -- "$PWD"
out=$PWD/build/bench-access-ir
mkdir -p "$out"
command -v valgrind >/dev/null || { echo "bench/access_ir.sh needs valgrind" >&2; exit 1; }

# ir LABEL TREE OPTIONS CMD...: the instructions of CMD under TREE's shim.
ir() {
    local label=$1 tree=$2 opts=$3 d=$out/$1
    shift 3
    rm -rf "$d" && mkdir -p "$d"
    HEAPPROF_OPTIONS="output=$d/p.%p.hpf$opts" valgrind --tool=cachegrind --trace-children=yes \
        --cache-sim=no --cachegrind-out-file="$d/cg.%p" \
        env LD_PRELOAD="$tree/build/libheapprof_shim.so" "$@" >/dev/null 2>"$d/err"
    printf '%-44s %16s\n' "$label" "$(grep -h '^summary' "$d"/cg.* | awk '{s += $2} END {print s}')"
}

n=0
for tree in "$@"; do
    n=$((n + 1))
    b=$out/t$n
    "$tree/scripts/heapprof-cc" --callbacks -O2 -o "$b.acc_cb" bench/access_bench.c
    "$tree/scripts/heapprof-cc" --callbacks -O2 -pthread -Wno-unknown-attributes -o "$b.ab_cb" bench/alloc_bench.c
    "$tree/scripts/heapprof-cc" -O2 -pthread -Wno-unknown-attributes -o "$b.ab_in" bench/alloc_bench.c
    echo "tree $n: $tree"
    ir "t$n access_bench 1, callbacks" "$tree" "" "$b.acc_cb" 1
    ir "t$n access_bench 1, callbacks, no word hists" "$tree" ":access_word_hist_max=0" "$b.acc_cb" 1
    ir "t$n alloc_bench -n 200000, callbacks" "$tree" "" "$b.ab_cb" -q -t 1 -n 200000
    ir "t$n alloc_bench -n 200000, callbacks, no word" "$tree" ":access_word_hist_max=0" "$b.ab_cb" -q -t 1 -n 200000
    ir "t$n alloc_bench -n 200000, inline" "$tree" "" "$b.ab_in" -q -t 1 -n 200000
done
