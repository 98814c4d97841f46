#!/bin/bash
# Access profiling on allocation-heavy code (issue 41's "far faster than LLVM's runtime";
# docs/PERFORMANCE.md, "Access profiling"). Five workloads, each built several ways:
#   alloc_bench   bench/alloc_bench.c -t 1 (stacks 5..15 frames deep)
#   ab_deep       the same with stacks 20..40 frames deep
#   deep_stack    bench/deep_stack.c 40: one 48-byte malloc/free pair 40 frames down, repeated
#   lua           Lua 5.4 (Debian's lua5.4 sources, test/access/debian_source.sh) running
#                 bench/lua_alloc.lua: strings, tables, closures, its garbage collector
#   stl           bench/stl_churn.cc: std::map/unordered_map/string/vector/shared_ptr churn
# and run as
#   plain         clang -O2 -g -fno-omit-frame-pointer
#   shim          the plain build under the shim (access profiling idle: no instrumented module)
#   hp-bare       the heapprof-cc build without the shim: the instrumentation's own cost
#   hp            scripts/heapprof-cc (clang, inline counters) under the shim
#   llvm14        clang -fmemory-profile, LLVM 14's own MemProf runtime (libclang-rt-14-dev)
#   plain16       clang-16 -O2 -g -fno-omit-frame-pointer (the base of llvm16's ratio)
#   llvm16        clang-16 -fmemory-profile, LLVM 16's runtime (libclang-rt-16-dev)
#   shim-B, hp-B  with BEFORE=path/to/libheapprof_shim.so: shim and hp with that library,
#                 interleaved with the others (a before/after comparison in the same runs)
# The shim runs are what scripts/heapprof-run does (LD_PRELOAD, one profile per process),
# without the script's own start-up in the times.
# Times: user + system CPU seconds (/usr/bin/time) of each run; the machine is shared and its
# speed drifts, so every repetition runs every configuration of a workload back to back on one
# cpu (ACCESS_CPU, default 0), and a configuration's figure is the median over repetitions of
# its time over the plain (plain16 for llvm16) time of the same repetition.
# With --instr: instructions instead (valgrind --tool=cachegrind --cache-sim=no, smaller sizes,
# one run each, binaries without their debug information, which valgrind 3.19 cannot read from
# every clang build; not LLVM's runtime, which valgrind cannot run): plain, hp-bare, shim and hp,
# and per allocation (the profile's count) the access work: what the shim costs the heapprof-cc
# build, (hp - hp-bare), less what it costs the plain build, (shim - plain).
# Usage: bench/access_alloc.sh [--instr] [REPS]   (after make; REPS default 5)
# Environment: ACCESS_WORKLOADS (default "alloc_bench ab_deep deep_stack lua stl"),
#   ACCESS_CONFIGS (default "plain shim hp llvm14 plain16 llvm16"), BEFORE, SHIM (default
#   build/libheapprof_shim.so). Not part of make check.
set -eu
cd "$(dirname "$0")/.."
instr=0
[ "${1:-}" = --instr ] && { instr=1; shift; }
reps=${1:-5}
root=$(pwd)
out=$root/build/bench-access-alloc
mkdir -p "$out"
[ -x build/heapprof-report ] && [ -f "${SHIM:-build/libheapprof_shim.so}" ] && [ -f build/libheapprof_rt.a ] ||
    { echo "run make first" >&2; exit 1; }
# Private copies of the libraries taken now: a rebuild meanwhile does not change the runs.
cp "${SHIM:-build/libheapprof_shim.so}" "$out/shim.so"
shim=$out/shim.so before=""
[ -n "${BEFORE:-}" ] && cp "$BEFORE" "$out/shim-before.so" && before=$out/shim-before.so
for t in /usr/bin/time taskset clang; do
    command -v $t >/dev/null || { echo "bench/access_alloc.sh needs $t" >&2; exit 1; }
done
workloads=${ACCESS_WORKLOADS:-alloc_bench ab_deep deep_stack lua stl}
configs=${ACCESS_CONFIGS:-plain shim hp-bare hp llvm14 plain16 llvm16}
if [ $instr = 1 ]; then
    configs="plain hp-bare shim hp"
    command -v valgrind >/dev/null || { echo "--instr needs valgrind" >&2; exit 1; }
fi
command -v clang-16 >/dev/null || configs=$(echo " $configs " | sed 's/ plain16 / /; s/ llvm16 / /')
[ -n "$before" ] && configs="$configs shim-B hp-B"
cpu=${ACCESS_CPU:-0}

# ---------- builds ----------
# cc FLAVOUR: the compiler command of a build flavour (build of the hp flavour: heapprof-cc).
fp="-O2 -g -fno-omit-frame-pointer"
cc_of() {
    case $1 in
    plain) echo "clang $fp" ;;
    hp) echo "$root/scripts/heapprof-cc -O2" ;;
    llvm14) echo "clang $fp -fmemory-profile" ;;
    plain16) echo "clang-16 $fp" ;;
    llvm16) echo "clang-16 $fp -fmemory-profile" ;;
    esac
}
flavours="plain hp llvm14"
command -v clang-16 >/dev/null && flavours="$flavours plain16 llvm16"

lua_tar=""
build() { # build WORKLOAD FLAVOUR: into $out/WORKLOAD.FLAVOUR (lua: a source tree)
    local w=$1 f=$2 cc
    cc=$(cc_of "$f")
    case $w in
    alloc_bench) $cc -pthread -Wno-unknown-attributes -o "$out/$w.$f" bench/alloc_bench.c ;;
    ab_deep) $cc -pthread -Wno-unknown-attributes -DAB_MIN_DEPTH=20 -DAB_MAX_DEPTH=40 -o "$out/$w.$f" bench/alloc_bench.c ;;
    deep_stack) $cc -o "$out/$w.$f" bench/deep_stack.c ;;
    stl) ${cc/clang/clang++} -o "$out/$w.$f" bench/stl_churn.cc 2>/dev/null ||
        $cc -x c++ -o "$out/$w.$f" bench/stl_churn.cc -lstdc++ ;;
    lua)
        [ -x "$out/lua.$f/src/lua" ] && return 0
        rm -rf "$out/lua.$f" && mkdir -p "$out/lua.$f"
        tar -xzf "$lua_tar" -C "$out/lua.$f" --strip-components=1
        make -C "$out/lua.$f/src" -j2 linux CC="$cc" MYCFLAGS="-g -fno-omit-frame-pointer" \
            >"$out/lua.$f.build" 2>&1 || { echo "building lua ($f) failed: $out/lua.$f.build" >&2; exit 1; }
        ;;
    esac
}

if echo " $workloads " | grep -q ' lua '; then
    lua_tar=$(sh test/access/debian_source.sh lua5.4 "$root/build/access-src") ||
        { echo "no Lua sources: lua left out" >&2; workloads=$(echo " $workloads " | sed 's/ lua / /'); }
fi
echo "building into $out" >&2
for w in $workloads; do
    for f in $flavours; do
        [ $instr = 1 ] && [ "$f" != plain ] && [ "$f" != hp ] && continue
        if [ $w = stl ] && [ $f = hp ]; then
            "$root/scripts/heapprof-c++" -O2 -o "$out/stl.hp" bench/stl_churn.cc
        else
            build "$w" "$f"
        fi
    done
done

# ---------- runs ----------
# cmd WORKLOAD FLAVOUR: the command line (sizes: a fraction of a second to a few seconds plain;
# smaller with --instr).
cmd() {
    local w=$1 f=$2 bin=$out/$1.$2
    case $w in
    alloc_bench) echo "$bin -q -t 1 -n $([ $instr = 1 ] && echo 200000 || echo 2000000)" ;;
    ab_deep) echo "$bin -q -t 1 -n $([ $instr = 1 ] && echo 100000 || echo 1000000)" ;;
    deep_stack) echo "$bin 40 $([ $instr = 1 ] && echo 200 || echo 20000)" ;;
    lua) echo "$out/lua.$f/src/lua $root/bench/lua_alloc.lua $([ $instr = 1 ] && echo 1 || echo 4)" ;;
    stl) echo "$bin $([ $instr = 1 ] && echo 40000 || echo 400000)" ;;
    esac
}

# flavour CONFIG: the build a configuration runs; preload CONFIG: its shim ("" for none).
flavour() { case $1 in shim | shim-B) echo plain ;; hp | hp-B | hp-bare) echo hp ;; *) echo "$1" ;; esac; }
preload() { case $1 in shim | hp) echo "$shim" ;; shim-B | hp-B) echo "$before" ;; *) echo "" ;; esac; }

# one WORKLOAD CONFIG: one run; prints CPU seconds (instructions with --instr). Its output is
# kept in $out/WORKLOAD.CONFIG.out and must equal the plain run's.
one() {
    local w=$1 c=$2 so d=$out/run-$1-$2
    so=$(preload "$c")
    rm -rf "$d" && mkdir -p "$d"
    local c_cmd
    c_cmd=$(cmd "$w" "$(flavour "$c")")
    local envs=(env)
    [ -n "$so" ] && envs+=(LD_PRELOAD="$so" HEAPPROF_OPTIONS="output=$d/p.%p.hpf")
    case $c in llvm*) envs+=(MEMPROF_OPTIONS="log_path=$d/llvm") ;; esac
    if [ $instr = 1 ]; then
        local bin=${c_cmd%% *}
        objcopy --strip-debug "$bin" "$d/prog"
        (cd "$d" && "${envs[@]}" valgrind --tool=cachegrind --cache-sim=no \
            --cachegrind-out-file=/dev/null ./prog ${c_cmd#* } >"$out/$w.$c.out" 2>"$d/vg.err") ||
            { echo "$w $c failed: $d/vg.err" >&2; exit 1; }
        sed -n 's/.*I *refs: *//p' "$d/vg.err" | tr -d ,
    else
        (cd "$d" && taskset -c "$cpu" /usr/bin/time -f "%U %S" -o "$d/time" "${envs[@]}" $c_cmd \
            >"$out/$w.$c.out" 2>"$d/err") || { echo "$w $c failed: $d/err" >&2; exit 1; }
        awk '{ printf "%.3f\n", $1 + $2 }' "$d/time"
    fi
    if [ "$c" != plain ] && ! cmp -s "$out/$w.$c.out" "$out/$w.plain.out"; then
        echo "$w $c: output differs from the plain build's" >&2
        exit 1
    fi
}

# allocs WORKLOAD CONFIG: allocations the last run's profile counted.
allocs() {
    local f
    f=$(ls "$out/run-$1-$2"/p.*.hpf 2>/dev/null | head -1)
    [ -n "$f" ] || { echo 0; return; }
    build/heapprof-report --format json "$f" |
        python3 -c 'import json, sys; print(sum(c["alloc_count"] for c in json.load(sys.stdin)["contexts"]))'
}

median() { sort -g | awk '{ v[NR] = $1 } END { print NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }

if [ $instr = 1 ]; then
    # per allocation: ((hp - hp-bare) - (shim - plain)) / allocations
    printf '%-12s %13s %13s %13s %13s %9s %10s\n' workload plain hp-bare shim hp allocs "access/al"
    for w in $workloads; do
        one "$w" plain >"$out/$w.i.plain"
        p=$(cat "$out/$w.i.plain") hb=$(one "$w" hp-bare) s=$(one "$w" shim) h=$(one "$w" hp)
        n=$(allocs "$w" hp)
        extra=""
        if [ -n "$before" ]; then
            sb=$(one "$w" shim-B) hB=$(one "$w" hp-B)
            extra=$(awk -v p="$p" -v hb="$hb" -v s="$sb" -v h="$hB" -v n="$n" 'BEGIN { printf "  before: shim %d hp %d, access/al %.0f", s, h, n ? ((h - hb) - (s - p)) / n : 0 }')
        fi
        awk -v w="$w" -v p="$p" -v hb="$hb" -v s="$s" -v h="$h" -v n="$n" -v x="$extra" \
            'BEGIN { printf "%-12s %13d %13d %13d %13d %9d %10.0f%s\n", w, p, hb, s, h, n, n ? ((h - hb) - (s - p)) / n : 0, x }'
    done
    exit 0
fi

echo "shim: $shim ($(md5sum <"$shim" | cut -c1-8))${before:+; before: $before ($(md5sum <"$before" | cut -c1-8))}"
echo "CPU seconds (user + sys), $reps repetitions on cpu $cpu; ratio: median over repetitions of"
echo "the run's time over the plain build's in the same repetition (llvm16: over plain16)"
for w in $workloads; do
    : >"$out/$w.times"
    one "$w" plain >/dev/null # the output every other run is compared with
    for r in $(seq "$reps"); do
        # a different order each repetition: none always runs right after another
        order=$configs
        [ $((r % 2)) = 0 ] && order=$(echo $configs | tr ' ' '\n' | tac | tr '\n' ' ')
        line=""
        for c in $order; do line="$line $c=$(one "$w" "$c")"; done
        echo "$line" >>"$out/$w.times"
    done
    printf '\n%-12s %10s %10s %22s\n' "$w" "median s" "x base" "x base (min-max)"
    for c in $configs; do
        base=plain
        [ $c = llvm16 ] && base=plain16
        awk -v c="$c" -v b="$base" '{ for (i = 1; i <= NF; i++) { split($i, kv, "="); t[kv[1]] = kv[2] }
                                      print t[c], t[c] / t[b] }' "$out/$w.times" >"$out/$w.$c.ratios"
        tm=$(cut -d' ' -f1 "$out/$w.$c.ratios" | median)
        rm_=$(cut -d' ' -f2 "$out/$w.$c.ratios" | median)
        lo=$(cut -d' ' -f2 "$out/$w.$c.ratios" | sort -g | head -1)
        hi=$(cut -d' ' -f2 "$out/$w.$c.ratios" | sort -g | tail -1)
        printf '  %-10s %10.3f %9.2fx %13.2f-%.2f\n' "$c" "$tm" "$rm_" "$lo" "$hi"
    done
done
