# 4096 contexts whose stacks share most of their frames: each one's stack comes back from the
# frame tree exactly, and the profile stays small (format version 2), for both compilers and
# every unwinder that sees the whole stack (the program keeps its frame pointers).
for cc in gcc clang; do
    build "$PBIN/$cc/tree" $cc -O1 -g -fno-omit-frame-pointer -fno-optimize-sibling-calls test/profiling/tree.c || bad "build-$cc" "tree.c"
    for unw in cfi fp libunwind; do
        name=tree-$cc-$unw
        if run "$name" "unwinder=$unw" "$PBIN/$cc/tree"; then
            prof=$(first_profile "$TMP/$name")
            check "$name" tree "$prof" "$(wc -c <"$prof")"
        fi
    done
done
