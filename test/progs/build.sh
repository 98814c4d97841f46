#!/bin/sh
# Builds the integration test programs of test/progs/ with gcc and clang:
#   OUTDIR/gcc/NAME, OUTDIR/clang/NAME   -- plain builds, run bare and under the shim
#   OUTDIR/gcc-san/NAME                  -- ASan+UBSan builds of the programs listed in SAN_PROGS
#   OUTDIR/{gcc,clang}/libplug.so, libplug_deep.so -- plugins for t_dlopen
# Usage: sh test/progs/build.sh OUTDIR      (from the repository root)
# Only stale outputs are rebuilt; the gcc and clang builds run in parallel (CI has 2 cores).
set -eu

OUT=${1:?usage: build.sh OUTDIR}
SRC=$(dirname "$0")
# Programs whose subject is not the allocator: ASan replaces malloc, so allocator tests can't use it.
SAN_PROGS="t_libc t_stl"

FLAGS="-O2 -g -fno-omit-frame-pointer -pthread -Wall -Wextra -Wno-unused-parameter"
# DT_RUNPATH=$ORIGIN: t_dlopen opens its plugins by bare name, which glibc resolves with the
# RUNPATH of the object that called dlopen -- so a dlopen wrapper that hides the caller fails.
LINKFLAGS='-Wl,--enable-new-dtags -Wl,-rpath,$ORIGIN'

SANFLAGS="-fsanitize=address,undefined -fno-sanitize-recover=undefined"

# C++: -fsized-deallocation because clang 14 leaves the sized operator delete forms off.

# stale OUT DEP... : true when OUT is missing or older than any DEP (or this script).
stale() {
    o=$1; shift
    [ -e "$o" ] || return 0
    for d in "$@" "$SRC/build.sh"; do
        [ "$d" -nt "$o" ] && return 0
    done
    return 1
}

# build_one KIND CC CXX EXTRA SRCFILE: compiles one program for one compiler flavour.
build_one() {
    kind=$1 cc=$2 cxx=$3 extra=$4 src=$5
    base=$(basename "$src"); name=${base%.*}
    out="$OUT/$kind/$name"
    stale "$out" "$src" "$SRC/testutil.h" || return 0
    # A first line "/* link: LIBS */" names libraries the program is linked with.
    libs=$(sed -n '1s|^/\* link: \(.*\) \*/$|\1|p' "$src")
    case $src in
    *.cc) $cxx -std=gnu++17 -fsized-deallocation $FLAGS $extra -I"$SRC" -o "$out" "$src" \
              $LINKFLAGS $libs -ldl || exit 1 ;;
    *)    $cc -std=gnu11 $FLAGS $extra -I"$SRC" -o "$out" "$src" $LINKFLAGS $libs -ldl || exit 1 ;;
    esac
}

# build_flavour KIND CC CXX: every program plus the plugins for one compiler.
build_flavour() {
    kind=$1 cc=$2 cxx=$3
    mkdir -p "$OUT/$kind"
    for p in libplug libplug_deep; do
        if stale "$OUT/$kind/$p.so" "$SRC/plugin.c"; then
            $cc -std=gnu11 $FLAGS -fPIC -shared -DPLUGIN_NAME="\"$p\"" \
                -o "$OUT/$kind/$p.so" "$SRC/plugin.c" || exit 1
        fi
    done
    for src in "$SRC"/t_*.c "$SRC"/t_*.cc; do
        [ -e "$src" ] || continue
        build_one "$kind" "$cc" "$cxx" "" "$src"
    done
}

build_san() {
    mkdir -p "$OUT/gcc-san"
    for n in $SAN_PROGS; do
        for src in "$SRC/$n.c" "$SRC/$n.cc"; do
            if [ -e "$src" ]; then build_one gcc-san gcc g++ "$SANFLAGS" "$src"; fi
        done
    done
}

# Each flavour builds in its own background subshell; a failed compile exits that subshell.
mkdir -p "$OUT"
( build_flavour gcc gcc g++; build_san ) &
gcc_pid=$!
( build_flavour clang clang clang++ ) &
clang_pid=$!
rc=0
wait $gcc_pid || rc=1
wait $clang_pid || rc=1
[ $rc = 0 ] || echo "build.sh: building test programs failed" >&2
exit $rc
