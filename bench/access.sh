#!/bin/bash
# Access profiling's cost (issue 41; docs/PERFORMANCE.md, "Access profiling"). Two benchmarks:
#   access_bench (access-heavy: streaming, random access, pointer chase, small objects)
#     plain                       clang -O2
#     heapprof-cc, bare           the heapprof-cc build without the shim (instrumentation and
#                                 the runtime's own shadow only)
#     heapprof-run (MODE)         the heapprof-cc build under scripts/heapprof-run: inline,
#                                 callbacks and gcc builds
#     llvm-memprof                clang -fmemory-profile with LLVM's own runtime
#   alloc_bench (allocation-heavy, 1 thread) built plain, under heapprof-run (plain build: the
#   shim alone), heapprof-cc inline under heapprof-run, and with LLVM's runtime.
# Each run is timed RUNS times (wall, the median kept); "x plain" is the ratio to the plain
# build's median. Peak RSS is /usr/bin/time's; "shadow" is the profile's shadow_resident (the
# shadow's pages in memory at the exit dump) and, for LLVM's runtime, its peak RSS less the
# plain run's (it has no figure of its own).
# Usage: bench/access.sh [SCALE [EVENTS [RUNS]]]   (after make; defaults 1, 4000000, 3).
# Not part of make check.
set -eu
cd "$(dirname "$0")/.."
scale=${1:-1} events=${2:-4000000} runs=${3:-3}
out=build/bench-access
mkdir -p "$out"
[ -x build/heapprof-report ] && [ -f build/libheapprof_shim.so ] || { echo "run make first" >&2; exit 1; }
[ -x /usr/bin/time ] || { echo "bench/access.sh needs /usr/bin/time (Debian package time)" >&2; exit 1; }

src=bench/access_bench.c
clang -O2 -g -o "$out/plain" "$src"
scripts/heapprof-cc -O2 -o "$out/hp_inline" "$src"
scripts/heapprof-cc --callbacks -O2 -o "$out/hp_callbacks" "$src"
HEAPPROF_CC=gcc scripts/heapprof-cc -O2 -o "$out/hp_gcc" "$src"
clang -O2 -g -fno-omit-frame-pointer -fmemory-profile -o "$out/llvm" "$src"
ab=bench/alloc_bench.c
# (alloc_bench's noclone is gcc's: clang ignores it, and says so)
clang -O2 -g -pthread -fno-omit-frame-pointer -Wno-unknown-attributes -o "$out/ab_plain" "$ab"
scripts/heapprof-cc -O2 -pthread -Wno-unknown-attributes -o "$out/ab_hp" "$ab"
clang -O2 -g -pthread -fno-omit-frame-pointer -fmemory-profile -Wno-unknown-attributes -o "$out/ab_llvm" "$ab"

# measure NAME CMD...: RUNS timed runs; sets $t (median wall seconds) and $rss (KiB, of that run).
measure() {
    local name=$1 i
    shift
    : >"$out/$name.times"
    for i in $(seq "$runs"); do
        rm -f "$out/$name".*.hpf "$out/$name".llvm.*
        /usr/bin/time -f "%e %M" -o "$out/$name.time" "$@" >"$out/$name.out" 2>"$out/$name.err"
        cat "$out/$name.time" >>"$out/$name.times"
    done
    set -- $(sort -n "$out/$name.times" | sed -n "$(((runs + 1) / 2))p")
    t=$1 rss=$2
}

# shadow NAME: the shadow_resident of NAME's last profile, in KiB.
shadow() {
    local f
    f=$(ls "$out/$1".*.hpf 2>/dev/null | head -1)
    [ -n "$f" ] || { echo "-"; return; }
    build/heapprof-report --format json "$f" |
        python3 -c 'import json, sys; print(json.load(sys.stdin)["summary"]["shadow_resident"] // 1024)'
}

row() {
    # row LABEL SECONDS BASE RSS SHADOW
    printf '%-38s %8.2f s %7.2fx %9d KiB %9s KiB\n' "$1" "$2" "$(echo "$2 / $3" | bc -l)" "$4" "$5"
}

# hr NAME: the heapprof-run command line whose profiles shadow NAME reads.
hr() { echo "scripts/heapprof-run -q -o $out/$1.%p.hpf"; }

printf '%-38s %10s %8s %13s %13s\n' "access_bench $scale ($runs runs, median)" time "x plain" "peak RSS" shadow
measure plain "$out/plain" "$scale"
base=$t base_rss=$rss
row "plain" "$t" "$base" "$rss" "-"
measure hp_bare "$out/hp_inline" "$scale"
row "heapprof-cc inline, bare" "$t" "$base" "$rss" "-"
for m in inline callbacks gcc; do
    measure "run_$m" $(hr "run_$m") "$out/hp_$m" "$scale"
    row "heapprof-cc $m, heapprof-run" "$t" "$base" "$rss" "$(shadow "run_$m")"
done
MEMPROF_OPTIONS=log_path=$out/llvm.llvm measure llvm "$out/llvm" "$scale"
row "clang -fmemory-profile, LLVM" "$t" "$base" "$rss" "$((rss - base_rss))"
echo
printf '%-38s %10s %8s %13s %13s\n' "alloc_bench -t 1 -n $events" time "x plain" "peak RSS" shadow
measure ab_plain "$out/ab_plain" -q -t 1 -n "$events"
base=$t base_rss=$rss
row "plain" "$t" "$base" "$rss" "-"
measure ab_shim $(hr ab_shim) "$out/ab_plain" -q -t 1 -n "$events"
row "plain build, heapprof-run" "$t" "$base" "$rss" "-"
measure ab_hp $(hr ab_hp) "$out/ab_hp" -q -t 1 -n "$events"
row "heapprof-cc inline, heapprof-run" "$t" "$base" "$rss" "$(shadow ab_hp)"
MEMPROF_OPTIONS=log_path=$out/ab_llvm.llvm measure ab_llvm "$out/ab_llvm" -q -t 1 -n "$events"
row "clang -fmemory-profile, LLVM" "$t" "$base" "$rss" "$((rss - base_rss))"
