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
# Each configuration runs RUNS times, all of them in turn within a repetition (wall times): "x
# plain" is the median over repetitions of its time over the plain build's in the same
# repetition (the host's speed drifts between runs), "time" its median time. Peak RSS is
# /usr/bin/time's; "shadow" is the profile's shadow_resident (the shadow's pages in memory at
# the exit dump) and, for LLVM's runtime, its peak RSS less the plain run's (it has no figure
# of its own).
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

# once NAME CMD...: one timed run of CMD; appends "seconds KiB" to $out/NAME.times.
once() {
    local name=$1
    shift
    rm -f "$out/$name".*.hpf "$out/$name".llvm.*
    /usr/bin/time -f "%e %M" -o "$out/$name.time" "$@" >"$out/$name.out" 2>"$out/$name.err"
    cat "$out/$name.time" >>"$out/$name.times"
}

# shadow NAME: the shadow_resident of NAME's last profile, in KiB.
shadow() {
    local f
    f=$(ls "$out/$1".*.hpf 2>/dev/null | head -1)
    [ -n "$f" ] || { echo "-"; return; }
    build/heapprof-report --format json "$f" |
        python3 -c 'import json, sys; print(json.load(sys.stdin)["summary"]["shadow_resident"] // 1024)'
}

# hr NAME: the heapprof-run command line whose profiles shadow NAME reads.
hr() { echo "scripts/heapprof-run -q -o $out/$1.%p.hpf"; }

# table TITLE BASE NAME:LABEL:SHADOW...: RUNS repetitions, each running every configuration
# once, in turn (in the reverse order every other repetition), so the host's drift reaches
# them alike; then per configuration its median time, the median over repetitions of its time
# over BASE's in the same repetition, the peak RSS of its median run, and its shadow (SHADOW:
# "profile" (the profile's shadow_resident), "rss" (peak RSS over BASE's) or "-"). Each
# configuration's command is the function cmd_NAME.
table() {
    local title=$1 base=$2 spec r i name label kind t rss ratio
    shift 2
    local specs=("$@") n=$#
    for spec in "$@"; do : >"$out/${spec%%:*}.times"; done
    for r in $(seq "$runs"); do
        for i in $(seq 0 $((n - 1))); do
            [ $((r % 2)) = 0 ] && i=$((n - 1 - i))
            name=${specs[$i]%%:*}
            once "$name" $(cmd_"$name")
        done
    done
    printf '%-38s %10s %8s %13s %13s\n' "$title ($runs runs, median)" time "x plain" "peak RSS" shadow
    for spec in "$@"; do
        name=${spec%%:*} label=${spec#*:} kind=${label##*:} label=${label%:*}
        set -- $(sort -n "$out/$name.times" | sed -n "$(((runs + 1) / 2))p")
        t=$1 rss=$2
        ratio=$(paste "$out/$name.times" "$out/$base.times" | awk '{ print $1 / $3 }' | sort -g |
            awk '{ v[NR] = $1 } END { print NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }')
        case $kind in
        profile) kind=$(shadow "$name") ;;
        rss) kind=$((rss - $(sort -n "$out/$base.times" | sed -n "$(((runs + 1) / 2))p" | cut -d' ' -f2))) ;;
        esac
        printf '%-38s %8.2f s %7.2fx %9d KiB %9s KiB\n' "$label" "$t" "$ratio" "$rss" "$kind"
    done
}

cmd_plain() { echo "$out/plain $scale"; }
cmd_hp_bare() { echo "$out/hp_inline $scale"; }
cmd_run_inline() { echo "$(hr run_inline) $out/hp_inline $scale"; }
cmd_run_callbacks() { echo "$(hr run_callbacks) $out/hp_callbacks $scale"; }
cmd_run_gcc() { echo "$(hr run_gcc) $out/hp_gcc $scale"; }
cmd_llvm() { echo "env MEMPROF_OPTIONS=log_path=$out/llvm.llvm $out/llvm $scale"; }
table "access_bench $scale" plain "plain:plain:-" "hp_bare:heapprof-cc inline, bare:-" \
    "run_inline:heapprof-cc inline, heapprof-run:profile" \
    "run_callbacks:heapprof-cc callbacks, heapprof-run:profile" \
    "run_gcc:heapprof-cc gcc, heapprof-run:profile" "llvm:clang -fmemory-profile, LLVM:rss"
echo
ab_args="-q -t 1 -n $events"
cmd_ab_plain() { echo "$out/ab_plain $ab_args"; }
cmd_ab_shim() { echo "$(hr ab_shim) $out/ab_plain $ab_args"; }
cmd_ab_hp() { echo "$(hr ab_hp) $out/ab_hp $ab_args"; }
cmd_ab_llvm() { echo "env MEMPROF_OPTIONS=log_path=$out/ab_llvm.llvm $out/ab_llvm $ab_args"; }
table "alloc_bench -t 1 -n $events" ab_plain "ab_plain:plain:-" \
    "ab_shim:plain build, heapprof-run:-" "ab_hp:heapprof-cc inline, heapprof-run:profile" \
    "ab_llvm:clang -fmemory-profile, LLVM:rss"
