# Many threads at once: every block counted, metadata far below the budget, no warning; and
# with stacks cut at two frames, every allocation counts as truncated, each thread's count kept
# in its cache until it publishes (as its allocations are).
build "$PBIN/gcc/many_threads" gcc -O2 -g -pthread test/profiling/many_threads.c
name=many-threads
if run "$name" "" "$PBIN/gcc/many_threads"; then
    if grep -q "budget" "$TMP/$name.err"; then
        bad "$name" "$(head -c 300 "$TMP/$name.err")"
    else
        check "$name" many_threads "$(first_profile "$TMP/$name")"
    fi
fi
name=many-threads-truncated
if run "$name" "stack_depth=2" "$PBIN/gcc/many_threads"; then
    check "$name" many_threads_truncated "$(first_profile "$TMP/$name")"
fi
