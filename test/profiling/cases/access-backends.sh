# timeout: 600
# Access profiling on every allocator under the shim (heapprof-run --backend): two blocks never
# share a counter (shim/shadow/shadow.h). test/access/neighbours.c, built by heapprof-cc in each
# mode, makes blocks of every kind (malloc, calloc, the aligned forms at 32 to 8192 bytes,
# page-start valloc blocks, realloc) side by side and writes each before making the next: every
# site's accesses must be what the program counted and every block 100% utilised. patterns.c's
# figures (patterns.expected) must hold on each allocator too.
. "$ROOT/test/access/e2e_lib.sh"
backends="next glibc jemalloc tcmalloc mimalloc"
for m in inline callbacks gcc; do
    d=$TMP/access-backends-$m
    access_need "access-backends-$m" || break
    mkdir -p "$d"
    # shellcheck disable=SC2046
    if ! env $(access_env "$m") "$HEAPPROF_CC" -O2 -o "$d/neighbours" "$ACCESS_SRC/neighbours.c" 2>"$d/build.err"; then
        bad "access-backends-$m" "build: $(head -c 400 "$d/build.err" | tr '\n' '|')"
        continue
    fi
    "$d/neighbours" >"$d/bare.out" 2>&1 || { bad "access-backends-$m" "bare: $(head -c 300 "$d/bare.out")"; continue; }
    for be in $backends; do
        name=access-backends-$m-$be
        mkdir -p "$d/$be"
        access_profile "$name" "$d/$be" --backend "$be" -- "$d/neighbours" || continue
        if ! cmp -s "$d/bare.out" "$d/$be/run.out"; then
            bad "$name" "output differs under heapprof-run: $(diff "$d/bare.out" "$d/$be/run.out" | head -4 | tr '\n' '|')"
        elif msg=$(python3 "$ACCESS_SRC/check_sites.py" "$d/$be/report.json" "$m" --printed "$d/bare.out"); then
            ok "$name"
        else
            bad "$name" "$msg"
        fi
    done
done

# patterns.c (inline counters) on each allocator.
patterns_on_backends() {
    local d=$TMP/access-backends-patterns be name msg
    access_need access-backends-patterns || return 0
    if ! access_patterns_plain "$TMP/patterns-plain"; then
        bad access-backends-patterns "the plain gcc build of patterns.c failed"
        return 0
    fi
    if ! access_patterns_build inline "$d"; then
        bad access-backends-patterns "build: $(head -c 400 "$d/build.err" | tr '\n' '|')"
        return 0
    fi
    for be in $backends; do
        name=access-backends-patterns-$be
        mkdir -p "$d/$be"
        access_profile "$name" "$d/$be" --backend "$be" -- "$d/patterns" || continue
        if ! cmp -s "$TMP/patterns-plain/plain.out" "$d/$be/run.out"; then
            bad "$name" "output differs under heapprof-run"
        elif msg=$(python3 "$ACCESS_SRC/check_report.py" "$ACCESS_SRC/patterns.expected" inline \
            "$d/$be/report.json" "$ACCESS_SRC/patterns.c" 2>&1); then
            ok "$name"
        else
            bad "$name" "$(echo "$msg" | head -6 | tr '\n' ';')"
        fi
    done
}
patterns_on_backends
