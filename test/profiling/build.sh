#!/bin/bash
# Builds the test/profiling programs that several cases run, into build/profiling/{gcc,clang}/
# (a program only one case runs is built by that case). Only stale outputs are rebuilt.
# Usage: bash test/profiling/build.sh      (make progs runs it)
. "$(dirname "$0")/../lib.sh"
cd "$ROOT" || exit 1
P=test/profiling
failed=""
# b OUT CC ARGS...: build (test/lib.sh), remembering a failure.
b() { build "$@" || failed="$failed ${1#"$ROOT"/}"; }

for cc in gcc clang; do
    cxx=g++
    [ $cc = clang ] && cxx=clang++
    o=$PBIN/$cc
    b "$o/sites" $cc -O2 -g -fno-omit-frame-pointer -pthread -I"$HP_INC" $P/sites.c
    # Without frame pointers (as Debian builds its packages): only cfi and libunwind see past
    # the allocation site.
    b "$o/sites-nofp" $cc -O2 -g -fomit-frame-pointer -pthread -I"$HP_INC" $P/sites.c
    # C++17 for both compilers (clang 14 defaults to C++14: no aligned operator new).
    b "$o/sites_cxx" $cxx -std=c++17 -O2 -g -fno-omit-frame-pointer $P/sites_cxx.cc
    # Allocators linked into the program itself (the executable defines malloc): a simple one
    # of the program's own (own8: its blocks 8-byte aligned), one that wraps glibc's, jemalloc
    # and tcmalloc linked statically.
    for al in own own8 wrap jemalloc tcmalloc; do
        case $al in
        own) extra="$P/own_malloc.c" ;;
        own8) extra="-DOWN_MALLOC_ALIGN8 $P/own_malloc.c" ;;
        wrap) extra="$P/wrap_malloc.c" ;;
        jemalloc) extra="-Wl,-Bstatic -ljemalloc_pic -Wl,-Bdynamic -lm -ldl -lstdc++" ;;
        tcmalloc) extra="-Wl,-Bstatic -ltcmalloc_minimal -Wl,-Bdynamic -lstdc++ -lm" ;;
        esac
        # shellcheck disable=SC2086
        b "$o/sites-$al" $cc -O2 -g -fno-omit-frame-pointer -pthread -I"$HP_INC" $P/sites.c $extra
    done
done
o=$PBIN/gcc
b "$o/quick_exit" gcc -O1 -g $P/quick_exit.c
b "$o/evict" gcc -O1 -g -fno-omit-frame-pointer -fno-optimize-sibling-calls $P/evict.c
b "$o/killed" gcc -O1 -g $P/killed.c
b "$o/busy_dumps" gcc -O1 -g -pthread $P/busy_dumps.c

if [ -n "$failed" ]; then
    echo "test/profiling/build.sh: cannot build$failed" >&2
    exit 1
fi
