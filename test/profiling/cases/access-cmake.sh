# timeout: 600
# heapprof-cc and heapprof-c++ as CMake's compilers (USAGE.md, "Build systems and compiler
# options"), in each build mode: test/access/cmake/, a project with CMake's compiler checks, a
# shared C library, a shared C++ library, a static library and a dlopen'd plugin. It must
# configure and build, run bare with the plain build's output, and under heapprof-run give each
# module's site the blocks and accesses the program printed (check_sites.py --printed), every
# module listed as instrumented.
. "$ROOT/test/access/e2e_lib.sh"
if ! command -v cmake >/dev/null 2>&1; then
    bad access-cmake "cmake is not installed (scripts/debian-packages.txt has it)"
    return 0
fi
access_need access-cmake || return 0
src=$ROOT/test/access/cmake

# cmake_build DIR ENV...: the project configured and built in DIR; its messages in DIR.log.
cmake_build() {
    local d=$1
    shift
    env "$@" cmake -S "$src" -B "$d" -DCMAKE_BUILD_TYPE=Release >"$d.log" 2>&1 &&
        env "$@" cmake --build "$d" >>"$d.log" 2>&1
}

if ! cmake_build "$TMP/plain" CC=gcc CXX=g++ || ! "$TMP/plain/app" >"$TMP/plain.out" 2>&1; then
    bad access-cmake "the plain build: $(tail -c 300 "$TMP/plain.log")"
    return 0
fi
for m in inline callbacks gcc; do
    name=access-cmake-$m d=$TMP/$m
    # shellcheck disable=SC2046
    if ! cmake_build "$d" $(access_env "$m") CC="$HEAPPROF_CC" CXX="$ROOT/scripts/heapprof-c++"; then
        bad "$name" "build: $(grep -m3 -i 'error' "$d.log" | tr '\n' '|') $(tail -c 200 "$d.log")"
        continue
    fi
    if ! "$d/app" >"$d.bare" 2>&1 || ! cmp -s "$d.bare" "$TMP/plain.out"; then
        bad "$name" "bare: $(diff "$TMP/plain.out" "$d.bare" | head -3 | tr '\n' '|')"
        continue
    fi
    mkdir -p "$d/run"
    access_profile "$name" "$d/run" "$d/app" || continue
    if ! cmp -s "$d/run/run.out" "$TMP/plain.out"; then
        bad "$name" "output differs under heapprof-run"
    elif ! msg=$(python3 "$ACCESS_SRC/check_sites.py" "$d/run/report.json" "$m" --printed "$TMP/plain.out"); then
        bad "$name" "$msg"
    elif ! python3 -c 'import json, os, sys
mods = [os.path.basename(m) for m in json.load(open(sys.argv[1]))["access"]["instrumented_modules"]]
want = ["app", "libcvec.so", "libcxxitems.so", "libplugin.so"]
sys.exit(0 if all(w in mods for w in want) else "instrumented modules: %s" % mods)' "$d/run/report.json" 2>"$d/mods.err"; then
        bad "$name" "$(cat "$d/mods.err")"
    else
        ok "$name"
    fi
done
