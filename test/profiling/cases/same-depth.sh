# Stacks that share their innermost frames at the same stack pointers and part further out,
# changing all the time, in two threads: every allocation is recorded under its own path,
# whatever the walk's caches kept (gcc and clang; the unwinders that see code without fp).
for cc in gcc clang; do
    build "$PBIN/$cc/same_depth" $cc -O2 -g -pthread test/profiling/same_depth.c || bad "build-$cc" "same_depth.c"
    for unw in cfi libunwind; do
        name=same-depth-$cc-$unw
        if run "$name" "unwinder=$unw" "$PBIN/$cc/same_depth"; then
            check "$name" same_depth "$(first_profile "$TMP/$name")" "$TMP/$name.out"
        fi
    done
done
