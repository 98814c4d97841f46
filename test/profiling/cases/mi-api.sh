# mimalloc's own API (mi_malloc, mi_rezalloc, mi_strdup, heaps and their destruction) in a
# program linked with libmimalloc: after the shim (its backend) and preloaded before it
# (patched).
for cc in gcc clang; do
    if build "$PBIN/$cc/mi_api" $cc -O2 -g test/profiling/mi_api.c -lmimalloc; then
        for where in after before; do
            name=mi-api-$where-$cc
            run_before=""
            [ $where = before ] && run_before=$MIMALLOC
            if run "$name" "" "$PBIN/$cc/mi_api"; then
                check "$name" mi_api "$(first_profile "$TMP/$name")"
            fi
        done
        run_before=""
    else
        bad "mi-api-$cc" "cannot build test/profiling/mi_api.c"
    fi
done
