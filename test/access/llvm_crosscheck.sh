#!/bin/sh
# Builds crosscheck.c with clang -fmemory-profile and LLVM's own MemProf runtime (the clang
# driver links libclang_rt.memprof when -fmemory-profile is on the link line) and prints LLVM's
# figures per allocation site: "site alloc_count size total_accesses", the numbers heapprof's
# report of the heapprof-cc build must match (phase 2).
# Usage: sh test/access/llvm_crosscheck.sh OUTDIR [CLANG]   (CLANG: clang (14) or clang-16)
set -eu
out=${1:?usage: llvm_crosscheck.sh OUTDIR [CLANG]}
clang=${2:-clang}
src=$(dirname "$0")
mkdir -p "$out"
$clang -O2 -g -fno-omit-frame-pointer -fmemory-profile -o "$out/crosscheck.llvm" "$src/crosscheck.c"
# print_text: the profile as text; log_path=stderr: there instead of memprof.profraw.PID (the
# file the module's __memprof_profile_filename names).
MEMPROF_OPTIONS=print_text=true:log_path=stderr "$out/crosscheck.llvm" 2>"$out/llvm.txt" >/dev/null
# MIB blocks give id, alloc count, average size and average accesses per block; the stack of an
# id names its site (frame #1, the caller of malloc).
awk '
    /^Memory allocation stack id = / { id = $NF; next }
    /^\talloc_count / { sub(",", "", $2); cnt[id] = $2; size[id] = $5 + 0 }
    /^\taccess_count / { acc[id] = $3 + 0 }
    /^Stack for id / { sid = $4; sub(":", "", sid); next }
    /^    #1 / && sid != "" { if ($4 ~ /^site_/) site[sid] = substr($4, 6); sid = "" }
    END {
        for (i in site)
            if (i in cnt) {
                s = site[i]; n[s] += cnt[i]; sz[s] = size[i]; tot[s] += acc[i] * cnt[i]
            }
        for (s in n)
            printf "%s %d %d %d\n", s, n[s], sz[s], tot[s]
    }
' "$out/llvm.txt" | sort
