# make install into a staging root (DESTDIR): every file where it belongs; the installed
# heapprof-run profiles a program with the installed library (found beside its bin/, and
# through PREFIX when the script is copied elsewhere); the installed heapprof-report reads the
# profile; the installed heapprof-cc builds an instrumented program against the installed
# runtime and header; --help and man pages for the tools.
# timeout: 600
stage=$TMP/stage
prefix=/usr/local
if ! make -s -C "$ROOT" install DESTDIR="$stage" PREFIX="$prefix" >"$TMP/install.out" 2>&1; then
    bad install "make install failed: $(tail -5 "$TMP/install.out" | tr '\n' ';')"
    return
fi
p=$stage$prefix
missing=
for f in bin/heapprof-run bin/heapprof-cc bin/heapprof-c++ bin/heapprof-report \
    lib/heapprof/libheapprof_shim.so lib/heapprof/heapprof-probe lib/heapprof/libheapprof_rt.a \
    lib/heapprof/heapprof_rt_preinit.o lib/heapprof/heapprof_rt_mod_inline.o \
    lib/heapprof/heapprof_rt_mod_gcc.o lib/heapprof/heapprof_rt_mod_callbacks+inline.o \
    lib/heapprof/heapprof_rt_mod_gcc+inline.o lib/heapprof/notsan/libtsan.a include/heapprof.h \
    share/man/man1/heapprof-run.1 share/man/man1/heapprof-report.1 share/man/man1/heapprof-cc.1 \
    share/man/man1/heapprof-c++.1 share/man/man3/heapprof.3; do
    [ -f "$p/$f" ] || missing="$missing $f"
done
[ -x "$p/bin/heapprof-run" ] || missing="$missing (bin/heapprof-run not executable)"
grep -q '@PREFIX@' "$p/bin/heapprof-run" "$p/bin/heapprof-cc" && missing="$missing (@PREFIX@ left in a script)"
if [ -z "$missing" ]; then ok install-files; else bad install-files "missing:$missing"; fi

# --help of each tool; the man pages format.
helps=
"$p/bin/heapprof-run" --help 2>&1 | grep -q '^usage: heapprof-run' || helps="$helps heapprof-run"
"$p/bin/heapprof-report" --help 2>&1 | grep -q '^usage: heapprof-report' || helps="$helps heapprof-report"
if command -v man >/dev/null; then
    for m in man1/heapprof-run.1 man1/heapprof-report.1 man1/heapprof-cc.1 man3/heapprof.3; do
        man -l "$p/share/man/$m" 2>/dev/null | grep -q NAME || helps="$helps $m"
    done
fi
if [ -z "$helps" ]; then ok install-help; else bad install-help "no help or man page:$helps"; fi

# The pool example built against the installed header, run by the installed heapprof-run (which
# must preload the installed shim, not the build tree's), read by the installed report tool.
# $p/bin/NAME ARGS...: an installed tool.
ex=$TMP/pool-example
if ! gcc -O2 -g -fno-omit-frame-pointer -I"$p/include" -o "$ex" "$ROOT/examples/pool.c" 2>"$TMP/cc.err"; then
    bad install-run "cannot build examples/pool.c against the installed header: $(head -c 200 "$TMP/cc.err")"
else
    pre=$("$p/bin/heapprof-run" -q -o "$TMP/pre.hpf" -- /bin/sh -c 'echo "$LD_PRELOAD"')
    case $pre in
    "$p/lib/heapprof/libheapprof_shim.so" | "$p/bin/../lib/heapprof/libheapprof_shim.so") ok install-preload ;;
    *) bad install-preload "the installed heapprof-run preloads '$pre'" ;;
    esac
    # pool_ok JSON: the example's make_node objects: 1,000 of 64 bytes, live at exit, pool.
    pool_ok() {
        python3 - "$1" <<'PY'
import json, sys
doc = json.load(open(sys.argv[1]))
ft = doc["frame_table"]
nodes = [c for c in doc["contexts"] if any(ft[i]["function"] == "make_node" for i in c["frames"])]
ok = (len(nodes) == 1 and nodes[0]["pool"] is True and nodes[0]["alloc_count"] == 1000 and
      nodes[0]["live_count"] == 1000 and nodes[0]["total_size"] == 64000)
sys.exit(0 if ok else 1)
PY
    }
    if "$p/bin/heapprof-run" -q -o "$TMP/ex.hpf" -- "$ex" >"$TMP/ex.out" 2>"$TMP/ex.err" &&
        "$p/bin/heapprof-report" --format json -o "$TMP/ex.json" "$TMP/ex.hpf" 2>>"$TMP/ex.err" &&
        pool_ok "$TMP/ex.json" && "$p/bin/heapprof-report" "$TMP/ex.hpf" | grep -q 'make_node'; then
        ok install-run
    else
        bad install-run "$(head -c 300 "$TMP/ex.err")"
    fi
    # A copy of the installed script elsewhere finds the library through PREFIX: installed
    # with PREFIX=$TMP/pfx (no DESTDIR), the script copied to $TMP/elsewhere.
    if make -s -C "$ROOT" install PREFIX="$TMP/pfx" >"$TMP/install2.out" 2>&1; then
        mkdir -p "$TMP/elsewhere"
        cp "$TMP/pfx/bin/heapprof-run" "$TMP/elsewhere/"
        pre=$("$TMP/elsewhere/heapprof-run" -q -o "$TMP/pre2.hpf" -- /bin/sh -c 'echo "$LD_PRELOAD"')
        if [ "$pre" = "$TMP/pfx/lib/heapprof/libheapprof_shim.so" ] &&
            "$TMP/elsewhere/heapprof-run" -q -o "$TMP/ex2.hpf" -- "$ex" >/dev/null 2>&1 && [ -s "$TMP/ex2.hpf" ]; then
            ok install-prefix
        else
            bad install-prefix "preloads '$pre'"
        fi
    else
        bad install-prefix "make install PREFIX=$TMP/pfx failed: $(tail -3 "$TMP/install2.out" | tr '\n' ';')"
    fi
fi

# The installed heapprof-cc with gcc, compiling and linking in one command: the installed empty
# libtsan keeps gcc's own out (the program does not load it), and the blocks get access counts.
if HEAPPROF_CC=gcc "$p/bin/heapprof-cc" -O2 -I"$p/include" -o "$TMP/pool-gcc" \
    "$ROOT/examples/pool.c" 2>"$TMP/gcc.err" && ! ldd "$TMP/pool-gcc" | grep -q libtsan &&
    "$p/bin/heapprof-run" -q -o "$TMP/gcc.hpf" -- "$TMP/pool-gcc" >/dev/null 2>&1 &&
    "$p/bin/heapprof-report" --format json -o "$TMP/gcc.json" "$TMP/gcc.hpf" &&
    python3 -c '
import json, sys
doc = json.load(open(sys.argv[1]))
sys.exit(0 if any(c["total_access_count"] > 0 for c in doc["contexts"]) else 1)' "$TMP/gcc.json"; then
    ok install-heapprof-cc-gcc
else
    bad install-heapprof-cc-gcc "$(head -c 300 "$TMP/gcc.err"; ldd "$TMP/pool-gcc" 2>&1 | grep tsan)"
fi

# The installed heapprof-cc (clang, inline counters) with the installed runtime: the example's
# objects get access counts.
if command -v clang >/dev/null; then
    if "$p/bin/heapprof-cc" -O2 -I"$p/include" -o "$TMP/pool-acc" "$ROOT/examples/pool.c" 2>"$TMP/hcc.err" &&
        "$p/bin/heapprof-run" -q -o "$TMP/acc.hpf" -- "$TMP/pool-acc" >/dev/null 2>&1 &&
        "$p/bin/heapprof-report" --format json -o "$TMP/acc.json" "$TMP/acc.hpf" &&
        python3 -c '
import json, sys
doc = json.load(open(sys.argv[1]))
sys.exit(0 if doc["access"] is not None and
         any(c["pool"] and c["total_access_count"] > 0 for c in doc["contexts"]) else 1)' "$TMP/acc.json"; then
        ok install-heapprof-cc
    else
        bad install-heapprof-cc "$(head -c 300 "$TMP/hcc.err")"
    fi
else
    skip install-heapprof-cc "no clang"
fi
