# jemalloc's own API (mallocx, rallocx, sdallocx, dallocx) in a program linked with jemalloc, as
# a shared library and linked in (then the executable keeps mallocx and friends out of its
# dynamic symbol table: the patcher finds them in its full one).
for cc in gcc clang; do
    for how in shared static; do
        name=ext-api-$cc
        jl="-ljemalloc"
        if [ $how = static ]; then
            name=ext-api-linked-$cc
            jl="-Wl,-Bstatic -ljemalloc_pic -Wl,-Bdynamic -lm -ldl -lstdc++ -pthread"
        fi
        # shellcheck disable=SC2086
        if build "$PBIN/$cc/ext_api-$how" $cc -O2 -g test/profiling/ext_api.c $jl; then
            if run "$name" "" "$PBIN/$cc/ext_api-$how"; then
                check "$name" ext_api "$(first_profile "$TMP/$name")"
            fi
        else
            bad "$name" "cannot build test/profiling/ext_api.c ($how)"
        fi
    done
done
