# timeout: 300
# heapprof-cc as a drop-in compiler (USAGE.md, "Build systems and compiler options"), with
# test/access/rmw.c (321 accesses and 160 writes a site_rmw block, 160 and 160 a site_store one):
# objects built inline linked in callbacks and gcc mode (a warning; the module counts reads and
# writes together, exactly), gcc's -flto compiled and linked apart (counted), response files and
# -v (instrumented), a link of plain objects alone (a warning), --shared and -nostdlib links,
# and the refusals, one line each.
. "$ROOT/test/access/e2e_lib.sh"
d=$TMP/heapprof-cc-options
mkdir -p "$d"
rmw=$ACCESS_SRC/rmw.c
access_need heapprof-cc-options || return 0

# counted NAME MODE BINARY: BINARY under heapprof-run has rmw.c's exact figures; MODE as
# check_sites.py takes it (inline: reads and writes not apart).
counted() {
    local name=$1 m=$2 msg
    mkdir -p "$d/$name"
    access_profile "$name" "$d/$name" "$3" || return 1
    if msg=$(python3 "$ACCESS_SRC/check_sites.py" "$d/$name/report.json" "$m" \
        site_rmw=8,128,321,160 site_store=8,128,160,160); then
        return 0
    fi
    bad "$name" "$msg"
    return 1
}

# Inline objects in a callbacks and a gcc link.
if "$HEAPPROF_CC" -O2 -c -o "$d/rmw_inline.o" "$rmw" 2>"$d/inline.err"; then
    for m in callbacks gcc; do
        name=heapprof-cc-options-inline-objects-$m
        # shellcheck disable=SC2046
        if ! env $(access_env "$m") "$HEAPPROF_CC" -o "$d/mixed-$m" "$d/rmw_inline.o" 2>"$d/mixed-$m.err"; then
            bad "$name" "link: $(head -c 300 "$d/mixed-$m.err")"
        elif [ "$(wc -l <"$d/mixed-$m.err")" != 1 ] ||
            ! grep -q '^heapprof-cc: warning: .*rmw_inline.o was built in inline mode' "$d/mixed-$m.err"; then
            bad "$name" "want one warning line, got: $(head -c 300 "$d/mixed-$m.err")"
        elif counted "$name" inline "$d/mixed-$m"; then
            if python3 -c 'import json, sys
a = json.load(open(sys.argv[1]))["access"]
sys.exit(0 if a["reads_writes_apart"] is False and "inline" in a["modes"] and sys.argv[2] in a["modes"] else 1)' \
                "$d/$name/report.json" "$m"; then
                ok "$name"
            else
                bad "$name" "access: $(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["access"])' "$d/$name/report.json")"
            fi
        fi
    done
else
    bad heapprof-cc-options-inline-objects "compile: $(head -c 300 "$d/inline.err")"
fi

# gcc -flto, compiled and linked in two commands: the instrumentation runs at the link.
name=heapprof-cc-options-gcc-lto
if env HEAPPROF_CC=gcc "$HEAPPROF_CC" -O2 -flto -c -o "$d/lto.o" "$rmw" 2>"$d/lto.err" &&
    env HEAPPROF_CC=gcc "$HEAPPROF_CC" -O2 -flto -o "$d/lto" "$d/lto.o" 2>>"$d/lto.err"; then
    counted "$name" gcc "$d/lto" && ok "$name"
else
    bad "$name" "build: $(head -c 300 "$d/lto.err")"
fi

# A response file and -v: instrumented like any other command.
name=heapprof-cc-options-response-file
printf '%s\n' "-O2 -o '$d/rsp prog' '$rmw'" >"$d/args.rsp"
if "$HEAPPROF_CC" "@$d/args.rsp" 2>"$d/rsp.err"; then
    counted "$name" inline "$d/rsp prog" && ok "$name"
else
    bad "$name" "build: $(head -c 300 "$d/rsp.err")"
fi
name=heapprof-cc-options-verbose
if "$HEAPPROF_CC" -v -O2 -c -o "$d/v.o" "$rmw" >/dev/null 2>&1 &&
    nm "$d/v.o" | grep -q ' U __memprof_shadow_memory_dynamic_address$'; then
    ok "$name"
else
    bad "$name" "-v -c made no instrumented object"
fi

# A link of plain objects alone (a build not cleaned after CC changed) says it counts nothing.
name=heapprof-cc-options-plain-objects
if gcc -O2 -c -o "$d/plain.o" "$rmw" && "$HEAPPROF_CC" -o "$d/plainlink" "$d/plain.o" 2>"$d/plain.err"; then
    if [ "$(wc -l <"$d/plain.err")" = 1 ] &&
        grep -q '^heapprof-cc: warning: no object of this link was built by heapprof-cc' "$d/plain.err"; then
        ok "$name"
    else
        bad "$name" "want one warning line, got: $(head -c 300 "$d/plain.err")"
    fi
else
    bad "$name" "build: $(head -c 300 "$d/plain.err")"
fi

# Libraries: --shared (no preinit object in a library), -nostdlib with -z defs.
name=heapprof-cc-options-libraries
printf 'int lib_get(int *p) { return *p; }\n' >"$d/lib.c"
if "$HEAPPROF_CC" -fPIC --shared -o "$d/lib1.so" "$d/lib.c" 2>"$d/lib.err" &&
    "$HEAPPROF_CC" -fPIC -shared -nostdlib -Wl,-z,defs -o "$d/lib2.so" "$d/lib.c" 2>>"$d/lib.err"; then
    ok "$name"
else
    bad "$name" "$(head -c 300 "$d/lib.err")"
fi

# Refused with one line, before the compiler or the linker fails in its own words.
refused() { # refused NAME ENV... -- ARGS...: heapprof-cc fails, one line "heapprof-cc: ..."
    local name=heapprof-cc-options-refuses-$1 e=()
    shift
    while [ "$1" != -- ]; do e+=("$1"); shift; done
    shift
    if env "${e[@]}" "$HEAPPROF_CC" "$@" >"$d/$name.out" 2>&1; then
        bad "$name" "accepted"
    elif [ "$(wc -l <"$d/$name.out")" = 1 ] && grep -q '^heapprof-cc: ' "$d/$name.out"; then
        ok "$name"
    else
        bad "$name" "want one line, got: $(head -c 300 "$d/$name.out")"
    fi
}
refused m32 HEAPPROF_CC=clang -- -m32 -c -o "$d/x.o" "$d/lib.c"
refused gcc-asan HEAPPROF_CC=gcc -- -fsanitize=address -c -o "$d/x.o" "$d/lib.c"
refused clang-tsan HEAPPROF_CC=clang -- -fsanitize=thread -o "$d/x" "$rmw"
refused gcc-static HEAPPROF_CC=gcc -- -static -o "$d/x" "$rmw"
