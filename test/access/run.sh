#!/bin/sh
# Access tests (issue 41): builds the programs of test/access/ with heapprof-cc in each mode
# (clang inline, clang callbacks, gcc; clang-16 inline too when installed) and checks
#   - the build runs without heapprof and prints what the plain build prints;
#   - under the probe preload (probe.c: the shim's attach and shadow code) the shadow holds the
#     counts of patterns.expected, an instrumented library counts into the same shadow, and so
#     does one opened with RTLD_LOCAL by an uninstrumented program;
#   - under the shim the profile has those counts per allocation site (utilisation, writes and
#     histograms too: check_profile.py), and live.c's blocks still live at a dump and at exit
#     are folded in with their counts;
#   - heapprof-cc handles -c/-E/-M, -shared, separate compile and link, and refuses a compiler
#     whose MemProf ABI it does not know.
# Usage: sh test/access/run.sh BUILD_DIR [OUT_DIR] (from the repository root; make access-check;
# case access-probe runs it too). OUT_DIR: scratch, BUILD_DIR/access by default.
# Prints "ok NAME" / "FAIL NAME: reason" per test and "N passed, M failed".
set -u

top=$(pwd)
build=${1:?usage: run.sh BUILD_DIR [OUT_DIR]}
case $build in /*) ;; *) build=$top/$build ;; esac
out=${2:-$build/access}
src=$top/test/access
cc=$top/scripts/heapprof-cc
probe=$out/libprobe.so
pass=0 fail=0
ok() { echo "ok $1"; pass=$((pass + 1)); }
bad() { echo "FAIL $1: $2"; fail=$((fail + 1)); }
mkdir -p "$out"

# The plain build: what every instrumented build must print when run bare.
gcc -O2 -g -o "$out/libaccess_lib.so" -fPIC -shared "$src/access_lib.c" &&
    gcc -O2 -g -o "$out/patterns.plain" "$src/patterns.c" -L"$out" -laccess_lib -Wl,-rpath,"$out" ||
    { bad build-plain "gcc failed"; echo "$pass passed, $fail failed"; exit 1; }
"$out/patterns.plain" >"$out/plain.out" 2>&1 || bad run-plain "exit status $?"

modes="inline callbacks gcc"
command -v clang-16 >/dev/null 2>&1 && modes="$modes clang16"

# check_probe MODE OUTPUT: the probe lines against patterns.expected.
check_probe() {
    exp=$1 got=$2 name=$3
    awk -v mode="$exp" -v name="$name" '
        FNR == NR { if ($1 == mode) { acc[$2] = $3; wr[$2] = $4; ut[$2] = $5 } next }
        $1 == "probe" && $2 in acc {
            for (i = 3; i <= NF; i++) { split($i, kv, "="); v[kv[1]] = kv[2] }
            u = v["touched"] == v["granules"] ? "full" : v["touched"] == 0 ? "none" : v["touched"] "/" v["granules"]
            if (ut[$2] ~ /\// && u == "full") u = v["touched"] "/" v["granules"]
            if (v["accesses"] != acc[$2] || v["writes"] != wr[$2] || u != ut[$2]) {
                printf "%s: got accesses=%s writes=%s util=%s, want %s %s %s\n", $2, v["accesses"], v["writes"], u, acc[$2], wr[$2], ut[$2]
                bad = 1
            }
            seen[$2] = 1
        }
        END { for (s in acc) if (!(s in seen)) { printf "%s: no probe line\n", s; bad = 1 } exit bad }
    ' "$src/patterns.expected" "$got"
}

gcc -O2 -g -fPIC -shared -fvisibility=hidden -std=gnu11 -D_GNU_SOURCE -Ishim -o "$probe" \
    "$src/probe.c" shim/shadow/attach.c shim/shadow/shadow.c || bad build-probe "gcc failed"
# The profile's access figures, decoded apart from the report (hpf_access.c).
gcc -O2 -g -std=gnu11 -Ishim -o "$out/hpf_access" "$src/hpf_access.c" shim/format/hib.c ||
    bad build-hpf-access "gcc failed"
shim=$build/libheapprof_shim.so
report=$build/heapprof-report

# check_live DIR: live.c's two profiles (its heapprof_dump and the exit profile).
check_live() {
    d=$1 w=$2
    n=$(ls "$d"/live.hpf.* 2>/dev/null | grep -v '\.tmp$' | head -1)
    [ -f "$d/live.hpf" ] && [ -n "$n" ] || { echo "profiles missing: $(ls "$d")"; return 1; }
    for f in "$n:96:24" "$d/live.hpf:192:48"; do
        p=${f%%:*} rest=${f#*:}
        acc=${rest%%:*} bin=${rest#*:}
        "$out/hpf_access" "$p" >"$p.access" || return 1
        "$report" --format json "$p" >"$p.json" || return 1
        id=$(python3 -c 'import json,sys
doc = json.load(open(sys.argv[1]))
for c in doc["contexts"]:
    if c["frames"] and doc["frame_table"][c["frames"][0]].get("function") == "site_live": print(c["context_id"])' "$p.json")
        want="ctx $id allocs=3 accesses=$acc writes=$w acc_min=$((acc / 3)) acc_max=$((acc / 3)) util_total=300 util_min=100 util_max=100 hist=$bin,$bin,$bin,$bin"
        grep -qx "$want" "$p.access" || { echo "$p: want '$want', got: $(grep "^ctx $id " "$p.access")"; return 1; }
    done
}

for m in $modes; do
    d=$out/$m
    mkdir -p "$d"
    case $m in
    inline) env="HEAPPROF_CC=clang HEAPPROF_CC_MODE=inline" exp=inline ;;
    callbacks) env="HEAPPROF_CC=clang HEAPPROF_CC_MODE=callbacks" exp=callbacks ;;
    gcc) env="HEAPPROF_CC=gcc" exp=gcc ;;
    clang16) env="HEAPPROF_CC=clang-16 HEAPPROF_CC_MODE=inline" exp=inline ;;
    esac
    # Separate compile and link for the library (-fPIC -shared), one command for the program.
    if ! env $env "$cc" -O2 -fPIC -c -o "$d/access_lib.o" "$src/access_lib.c" 2>"$d/build.err" ||
        ! env $env "$cc" -shared -o "$d/libaccess_lib.so" "$d/access_lib.o" 2>>"$d/build.err" ||
        ! env $env "$cc" -O2 -o "$d/patterns" "$src/patterns.c" -L"$d" -laccess_lib \
            -Wl,-rpath,"$d" 2>>"$d/build.err" ||
        ! gcc -O2 -o "$d/plain_host" "$src/plain_host.c" 2>>"$d/build.err"; then
        bad "build-$m" "$(head -3 "$d/build.err")"
        continue
    fi
    ok "build-$m"
    # Bare: same output as the plain build.
    if "$d/patterns" >"$d/bare.out" 2>&1 && cmp -s "$d/bare.out" "$out/plain.out"; then
        ok "bare-same-output-$m"
    else
        bad "bare-same-output-$m" "$(diff "$out/plain.out" "$d/bare.out" | head -3)"
    fi
    # Under the probe: the counts.
    if LD_PRELOAD=$probe "$d/patterns" >"$d/probe.out" 2>&1 && check_probe "$exp" "$d/probe.out" "$m" >"$d/check.err"; then
        ok "counts-$m"
    else
        bad "counts-$m" "$(head -3 "$d/check.err") $(grep -v '^probe' "$d/probe.out" | head -2)"
    fi
    # Under the shim: the same counts in the profile, per allocation site.
    rm -f "$d"/prof.hpf*
    if LD_PRELOAD=$shim HEAPPROF_OPTIONS="output=$d/prof.hpf" "$d/patterns" >"$d/shim.out" 2>&1 &&
        cmp -s "$d/shim.out" "$out/plain.out" &&
        "$report" --format json "$d/prof.hpf" >"$d/prof.json" 2>"$d/report.err" &&
        "$out/hpf_access" "$d/prof.hpf" >"$d/prof.access" &&
        python3 "$src/check_profile.py" "$src/patterns.expected" "$exp" "$d/prof.json" \
            "$d/prof.access" "$src/patterns.c" >"$d/profile.err" 2>&1; then
        ok "profile-$m"
    else
        bad "profile-$m" "$(head -3 "$d/profile.err" "$d/report.err" 2>/dev/null) $(diff "$out/plain.out" "$d/shim.out" | head -2)"
    fi
    # Live blocks folded at a dump and at exit.
    rm -f "$d"/live.hpf*
    w=96
    [ $exp = inline ] && w=0
    if env $env "$cc" -O2 -I"$top/include" -o "$d/live" "$src/live.c" 2>>"$d/build.err" &&
        LD_PRELOAD=$shim HEAPPROF_OPTIONS="output=$d/live.hpf" "$d/live" >"$d/live.out" 2>&1 &&
        check_live "$d" $w >"$d/live.err" 2>&1; then
        ok "profile-live-$m"
    else
        bad "profile-live-$m" "$(head -3 "$d/live.err" "$d/live.out")"
    fi
    # An uninstrumented program opening the instrumented library with RTLD_LOCAL.
    LD_PRELOAD=$probe "$d/plain_host" "$d/libaccess_lib.so" >"$d/host.out" 2>&1
    want="probe host_plugin accesses=64 writes=$([ $exp = inline ] && echo 0 || echo 64)"
    if grep -qx "$want" "$d/host.out"; then
        ok "rtld-local-library-$m"
    else
        bad "rtld-local-library-$m" "want '$want', got: $(head -2 "$d/host.out")"
    fi
done

# Driver behaviour.
t=$out/driver
mkdir -p "$t"
printf '#include <stdio.h>\nint main(void) { puts("conftest"); return 0; }\n' >"$t/conftest.c"
if "$cc" -E "$t/conftest.c" >"$t/e.out" 2>&1 && grep -q 'int main' "$t/e.out" &&
    "$cc" -MM "$t/conftest.c" >"$t/m.out" 2>&1 && grep -q 'conftest.o:' "$t/m.out" &&
    "$cc" -o "$t/conftest" "$t/conftest.c" && [ "$("$t/conftest")" = conftest ]; then
    ok driver-preprocess-and-conftest
else
    bad driver-preprocess-and-conftest "$(head -2 "$t/e.out" "$t/m.out")"
fi
# A compiler whose objects call another MemProf version check is refused with one line.
mkdir -p "$t/fakebin"
cat >"$t/fakebin/clang-99" <<'EOF'
#!/bin/sh
# Stands in for a clang with MemProf ABI v2: what it compiles calls the v2 check.
for a; do [ "$a" = -c ] && compile=1; done
if [ "${compile:-}" = 1 ]; then
    o=; prev=; for a; do [ "$prev" = -o ] && o=$a; prev=$a; done
    printf 'void __memprof_version_mismatch_check_v2(void); void f(void) { __memprof_version_mismatch_check_v2(); }\n' |
        clang -x c -c -o "$o" -
    exit
fi
exec clang "$@"
EOF
chmod +x "$t/fakebin/clang-99"
HEAPPROF_CC=$t/fakebin/clang-99 XDG_CACHE_HOME=$t/cache "$cc" -c -o "$t/x.o" "$t/conftest.c" 2>"$t/v2.err"
rc=$?
if [ $rc -ne 0 ] && [ "$(wc -l <"$t/v2.err")" -eq 1 ] && grep -q '^heapprof-cc: .*MemProf ABI v2; this heapprof speaks v1' "$t/v2.err"; then
    ok driver-refuses-unknown-abi
else
    bad driver-refuses-unknown-abi "rc=$rc: $(head -2 "$t/v2.err")"
fi

echo "$pass passed, $fail failed"
[ $fail -eq 0 ]
