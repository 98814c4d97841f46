#!/bin/sh
# The access-heavy benchmark built three ways, timed back to back (issue 41):
#   plain            clang -O2
#   heapprof-cc      the heapprof-cc build, run bare (instrumentation and runtime only);
#                    under heapprof-run once phase 2 wires the shadow into the shim
#   llvm-memprof     clang -fmemory-profile with LLVM's own runtime (libclang_rt.memprof)
# and the shadow RSS of each run (peak RSS, from /usr/bin/time when present).
# Usage: sh bench/access.sh [SCALE]   (from the repository root, after make rt). Not part of check.
set -eu
scale=${1:-1}
out=build/bench-access
mkdir -p "$out"
src=bench/access_bench.c
clang -O2 -g -o "$out/plain" "$src"
scripts/heapprof-cc -O2 -o "$out/hp_inline" "$src"
scripts/heapprof-cc --callbacks -O2 -o "$out/hp_callbacks" "$src"
HEAPPROF_CC=gcc scripts/heapprof-cc -O2 -o "$out/hp_gcc" "$src"
clang -O2 -g -fno-omit-frame-pointer -fmemory-profile -o "$out/llvm" "$src"
run() {
    name=$1; shift
    if [ -x /usr/bin/time ]; then
        /usr/bin/time -f "%e %M" -o "$out/$name.time" "$@" >"$out/$name.out"
        set -- $(cat "$out/$name.time")
        printf '%-22s %7.2f s  peak RSS %7d KiB\n' "$name" "$1" "$2"
    else
        t0=$(date +%s.%N); "$@" >"$out/$name.out"; t1=$(date +%s.%N)
        printf '%-22s %7.2f s\n' "$name" "$(echo "$t1 - $t0" | bc)"
    fi
}
run plain "$out/plain" "$scale"
run heapprof-cc-inline "$out/hp_inline" "$scale"
run heapprof-cc-callbacks "$out/hp_callbacks" "$scale"
run heapprof-cc-gcc "$out/hp_gcc" "$scale"
MEMPROF_OPTIONS=log_path=$out/llvm.profile run llvm-memprof "$out/llvm" "$scale"
