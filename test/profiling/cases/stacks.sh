# Walks that start on a coroutine's stack or an alternate signal stack stay inside mapped
# memory, in every unwinder.
build "$PBIN/gcc/stacks" gcc -O2 -g test/profiling/stacks.c
for unw in cfi fp libunwind; do
    name=stacks-$unw
    if run "$name" "unwinder=$unw" "$PBIN/gcc/stacks"; then
        check "$name" stacks "$(first_profile "$TMP/$name")"
    fi
done
