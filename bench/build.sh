#!/bin/sh
# Builds the allocation benchmark twice into OUTDIR: alloc_bench with frame pointers (the fp
# unwinder gets whole stacks) and alloc_bench_nofp without. Used by run.sh and model.sh.
# Usage: sh bench/build.sh OUTDIR      (from the repository root)
set -u
OUT=${1:?usage: sh bench/build.sh OUTDIR}
CFLAGS_B="-O2 -g -pthread -Wall -Wextra -Wstrict-prototypes -Wundef"
${CC:-gcc} $CFLAGS_B -fno-omit-frame-pointer -o "$OUT/alloc_bench" bench/alloc_bench.c || {
    echo "bench: building alloc_bench failed" >&2
    exit 1
}
${CC:-gcc} $CFLAGS_B -fomit-frame-pointer -o "$OUT/alloc_bench_nofp" bench/alloc_bench.c || {
    echo "bench: building alloc_bench_nofp failed" >&2
    exit 1
}
