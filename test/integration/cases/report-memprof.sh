# timeout: 600
# heapprof-report --format memprof (issue 43; docs/REPORT.md, "memprof"): heapprof profiles as
# LLVM MemProf raw profiles that llvm-profdata-16 reads with --profiled-binary. The contexts
# llvm-profdata-16 shows must be heapprof's (function, line, counts, sizes, accesses,
# lifetimes): test/access/crosscheck.c built non-PIE by gcc (allocation figures) and by
# heapprof-cc (access figures); the heapprof-cc build's export shows exactly what the same
# program's raw profile from LLVM's own runtime (clang-16 -fmemory-profile) shows; clang-16
# -fprofile-use takes the indexed data and marks the cold and the hot operator new
# (test/integration/memprof_use.cc); Lua built non-PIE from its sources; and a PIE program
# (Debian's sqlite3) is refused in one line, and so is a terminal as output. Skipped without
# llvm-profdata-16 (Debian llvm-16).
. "$ROOT/test/access/e2e_lib.sh"
PROFDATA=llvm-profdata-16
SITES=$ROOT/test/integration/memprof_sites.py
NOPIE="-no-pie -fno-pie"

# mp_export NAME DIR BIN: DIR/p.*.hpf (access_profile's) as DIR/prof.memprofraw, what
# llvm-profdata-16 shows of it (DIR/show.yaml) and its indexed form (DIR/prof.profdata).
mp_export() {
    local name=$1 d=$2 bin=$3
    if ! "$REPORT" --format memprof -o "$d/prof.memprofraw" "$d"/p.*.hpf 2>"$d/export.err"; then
        bad "$name-export" "$(head -c 300 "$d/export.err")"
        return 1
    fi
    if ! "$PROFDATA" show --memory --profiled-binary "$bin" "$d/prof.memprofraw" \
        >"$d/show.yaml" 2>"$d/show.err" || ! grep -q '^    NumMibInfo: [1-9]' "$d/show.yaml"; then
        bad "$name-show" "$(head -c 300 "$d/show.err")"
        return 1
    fi
    if ! "$PROFDATA" merge --profiled-binary "$bin" "$d/prof.memprofraw" -o "$d/prof.profdata" \
        2>"$d/merge.err" || [ ! -s "$d/prof.profdata" ]; then
        bad "$name-merge" "$(head -c 300 "$d/merge.err")"
        return 1
    fi
}

# mp_same NAME DIR SRC: the contexts llvm-profdata-16 shows are those of heapprof's JSON.
mp_same() {
    local msg
    if msg=$(python3 "$SITES" json "$2/show.yaml" "$2/report.json" "$3"); then
        ok "$1"
    else
        bad "$1" "$(echo "$msg" | head -5 | tr '\n' ';')"
    fi
}

# mp_crosscheck NAME CC CFLAGS...: crosscheck.c built by CC with CFLAGS, profiled, exported.
mp_crosscheck() {
    local name=$1 cc=$2 d=$TMP/$1
    shift 2
    mkdir -p "$d"
    if ! $cc "$@" -o "$d/crosscheck" "$ACCESS_SRC/crosscheck.c" 2>"$d/build.err"; then
        bad "$name-build" "$(head -c 300 "$d/build.err" | tr '\n' '|')"
        return 1
    fi
    access_profile "$name-run" "$d" "$d/crosscheck" || return 1
    mp_export "$name" "$d" "$d/crosscheck" || return 1
    mp_same "$name" "$d" "$ACCESS_SRC/crosscheck.c"
}

# mp_llvm: crosscheck.c under LLVM's own runtime (clang-16 -fmemory-profile): its raw profile
# and the export of the heapprof-cc build (memprof-access, also clang-16) show the same
# contexts: frames (function, line offset, column), counts, sizes and accesses.
mp_llvm() {
    local d=$TMP/memprof-llvm raw
    mkdir -p "$d"
    if ! clang-16 -O2 -g -fno-omit-frame-pointer -fmemory-profile $NOPIE -o "$d/crosscheck" \
        "$ACCESS_SRC/crosscheck.c" 2>"$d/build.err"; then
        bad memprof-llvm-build "$(head -c 300 "$d/build.err" | tr '\n' '|')"
        return
    fi
    MEMPROF_OPTIONS=log_path=$d/llvm.raw "$d/crosscheck" 2>/dev/null
    raw=$(ls "$d"/llvm.raw.* 2>/dev/null | head -1)
    if [ -z "$raw" ] || ! "$PROFDATA" show --memory --profiled-binary "$d/crosscheck" "$raw" \
        >"$d/show.yaml" 2>"$d/show.err"; then
        bad memprof-llvm-run "no raw profile from LLVM's runtime: $(head -c 300 "$d/show.err")"
        return
    fi
    python3 "$SITES" sites "$d/show.yaml" >"$d/llvm.sites"
    python3 "$SITES" sites "$TMP/memprof-access/show.yaml" >"$d/heapprof.sites"
    if [ "$(wc -l <"$d/llvm.sites")" = 5 ] && cmp -s "$d/llvm.sites" "$d/heapprof.sites"; then
        ok memprof-llvm
    else
        bad memprof-llvm "$(diff "$d/llvm.sites" "$d/heapprof.sites" | head -6 | tr '\n' ';')"
    fi
}

# mp_use: the end use. memprof_use.cc built by heapprof-c++ (clang-16), profiled, exported and
# merged; clang++-16 -fprofile-use with that data marks cold_site's operator new "cold" and
# hot_site's "notcold" (LLVM 16 calls a context cold when it has under 10 accesses per byte
# and lived at least 200 s; the lifetime bound is lowered to 0 s here).
mp_use() {
    local d=$TMP/memprof-use msg
    mkdir -p "$d"
    if ! HEAPPROF_CC=clang-16 "$ROOT/scripts/heapprof-c++" -O2 $NOPIE -o "$d/use" \
        "$ROOT/test/integration/memprof_use.cc" 2>"$d/build.err"; then
        bad memprof-use-build "$(head -c 300 "$d/build.err" | tr '\n' '|')"
        return
    fi
    access_profile memprof-use-run "$d" "$d/use" || return
    mp_export memprof-use "$d" "$d/use" || return
    if ! clang++-16 -O2 -g -fprofile-use="$d/prof.profdata" \
        -mllvm -memprof-min-lifetime-cold-threshold=0 -S -emit-llvm -o "$d/use.ll" \
        "$ROOT/test/integration/memprof_use.cc" 2>"$d/use.err"; then
        bad memprof-use "clang++-16 -fprofile-use failed: $(head -c 300 "$d/use.err")"
        return
    fi
    # In each site's function, the attribute group of its call of operator new[] (_Znam).
    msg=$(awk '
        /^define .*@_Z[0-9]+(hot|cold)_sitev\(/ { fn = ($0 ~ /hot_site/) ? "hot" : "cold" }
        /^}/ { fn = "" }
        fn != "" && /call .*@_Znam\(/ && match($0, /\) #[0-9]+/) { grp[fn] = substr($0, RSTART + 2, RLENGTH - 2) }
        /^attributes #/ { attr[$2] = $0 }
        END {
            for (f in grp) { a = attr[grp[f]]; m = "none"
                if (a ~ /"memprof"="notcold"/) m = "notcold"; else if (a ~ /"memprof"="cold"/) m = "cold"
                printf "%s=%s ", f, m }
        }' "$d/use.ll")
    case $msg in
    *cold=cold*hot=notcold* | *hot=notcold*cold=cold*) ok memprof-use ;;
    *) bad memprof-use "operator new[] calls marked: ${msg:-none found}" ;;
    esac
}

# mp_lua: Lua 5.4 built non-PIE from its sources by heapprof-cc (the sources access-real-lua
# fetches; skipped when they cannot be had) running workload.lua: every call chain of the
# lua executable in heapprof's JSON is one in llvm-profdata-16's view, with the same figures.
mp_lua() {
    local d=$TMP/memprof-lua tarball
    mkdir -p "$d/src" "$BUILD/access-src"
    if ! tarball=$(sh "$ACCESS_SRC/debian_source.sh" lua5.4 "$BUILD/access-src" 2>"$d/fetch.err"); then
        skip memprof-lua "Lua's sources could not be had: $(head -c 200 "$d/fetch.err")"
        return
    fi
    tar -xzf "$tarball" -C "$d/src" --strip-components=1 &&
        make -C "$d/src/src" -j2 linux CC="$HEAPPROF_CC" MYCFLAGS="-g -fno-pie" MYLDFLAGS=-no-pie \
            >"$d/build.log" 2>&1 || {
        bad memprof-lua-build "$(tail -c 300 "$d/build.log" | tr '\n' '|')"
        return
    }
    (cd "$d" && access_profile memprof-lua-run "$d" "$d/src/src/lua" "$ACCESS_SRC/workload.lua") || return
    mp_export memprof-lua "$d" "$d/src/src/lua" || return
    mp_same memprof-lua "$d" -
}

# mp_pie: a PIE executable (Debian's sqlite3) is refused in one line that says how to build,
# and the -o file is not created.
mp_pie() {
    local d=$TMP/memprof-pie
    mkdir -p "$d"
    if ! command -v sqlite3 >/dev/null 2>&1; then
        skip memprof-pie "sqlite3 is not installed"
        return
    fi
    access_profile memprof-pie-run "$d" sqlite3 :memory: 'select 1' || return
    "$REPORT" --format memprof -o "$d/out.memprofraw" "$d"/p.*.hpf 2>"$d/err"
    local st=$?
    if [ $st = 1 ] && [ "$(wc -l <"$d/err")" = 1 ] && [ ! -e "$d/out.memprofraw" ] &&
        grep -q '^heapprof-report: .*position-independent.*-no-pie -fno-pie' "$d/err"; then
        ok memprof-pie
    else
        bad memprof-pie "status $st, file $([ -e "$d/out.memprofraw" ] && echo written || echo absent): $(head -c 300 "$d/err")"
    fi
}

# mp_tty: binary data never goes to a terminal (script(1) gives the tool one): one line, status
# 2, nothing written.
mp_tty() {
    local d=$TMP/memprof-alloc out
    if ! command -v script >/dev/null 2>&1; then
        skip memprof-tty "script(1) is not installed"
        return
    fi
    out=$(script -qec "$REPORT --format memprof $(ls "$d"/p.*.hpf); echo status=\$?" /dev/null </dev/null | tr -d '\r')
    if [ "$out" = "heapprof-report: --format memprof writes binary data: give -o FILE
status=2" ]; then
        ok memprof-tty
    else
        bad memprof-tty "$(echo "$out" | head -c 300 | tr '\n' ';')"
    fi
}

if ! command -v "$PROFDATA" >/dev/null 2>&1; then
    skip report-memprof "$PROFDATA is not installed (Debian llvm-16)"
elif access_need report-memprof; then
    mp_crosscheck memprof-alloc gcc -O2 -g -fno-omit-frame-pointer -fno-ipa-icf $NOPIE && mp_tty
    clang=clang
    command -v clang-16 >/dev/null 2>&1 && clang=clang-16
    if mp_crosscheck memprof-access "env HEAPPROF_CC=$clang HEAPPROF_CC_MODE=inline $HEAPPROF_CC" \
        -O2 $NOPIE && [ $clang = clang-16 ]; then
        if [ -e "$(clang-16 -print-file-name=libclang_rt.memprof-x86_64.a)" ]; then
            mp_llvm
        else
            skip memprof-llvm "clang-16's MemProf runtime is not installed (libclang-rt-16-dev)"
        fi
    fi
    if command -v clang++-16 >/dev/null 2>&1; then
        mp_use
    else
        skip memprof-use "clang++-16 is not installed"
    fi
    mp_lua
    mp_pie
fi
