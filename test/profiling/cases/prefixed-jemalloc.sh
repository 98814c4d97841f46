# jemalloc under the _rjem_ prefix (Rust's jemallocator), made from Debian's static libjemalloc
# by renaming its public symbols: patch_prefixed=1 profiles its allocations exactly (served by
# the shim's backend); without it they are missing.
name=prefixed-jemalloc
jem=/usr/lib/x86_64-linux-gnu/libjemalloc_pic.a
if ! { nm -g --defined-only "$jem" 2>/dev/null | awk 'NF == 3 && ($2 == "T" || $2 == "W") && $3 !~ /^je_/ {print $3 " _rjem_" $3}' |
    sort -u >"$TMP/rjem.syms" && [ -s "$TMP/rjem.syms" ] &&
    objcopy --redefine-syms="$TMP/rjem.syms" "$jem" "$TMP/librjem.a" &&
    build "$PBIN/gcc/rjem" gcc -O1 -g test/profiling/rjem.c "$TMP/librjem.a" -lpthread -ldl -lm -lstdc++ 2>"$TMP/$name.build" &&
    build "$PBIN/gcc/rjem-nopie" gcc -O1 -g -no-pie test/profiling/rjem.c "$TMP/librjem.a" -lpthread -ldl -lm -lstdc++ 2>>"$TMP/$name.build"; }; then
    bad "$name" "cannot build a prefixed jemalloc from $jem: $(head -c 200 "$TMP/$name.build")"
    return
fi
for v in "" -nopie; do
    n=prefixed-jemalloc$v
    if run "$n" "patch_prefixed=1" "$PBIN/gcc/rjem$v"; then
        check "$n" rjem "$(first_profile "$TMP/$n")"
    fi
done
if run prefixed-jemalloc-off "" "$PBIN/gcc/rjem"; then
    check prefixed-jemalloc-off rjem_off "$(first_profile "$TMP/prefixed-jemalloc-off")"
fi
