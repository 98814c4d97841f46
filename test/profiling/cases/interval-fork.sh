# Periodic dumps across fork: the child runs its own interval thread, as a two-thread process,
# and its exit profile is written though it ends with _exit.
build "$PBIN/gcc/interval_fork" gcc -O1 -g test/profiling/interval_fork.c
name=interval-fork
if run "$name" "dump_interval_ms=50" "$PBIN/gcc/interval_fork"; then
    # The program says which pid is which (a listing sorts 10004 before 9999).
    parent=$(sed -n 's/^interval_fork: parent \([0-9]*\) child.*/\1/p' "$TMP/$name.out")
    child=$(sed -n 's/^interval_fork: parent [0-9]* child \([0-9]*\) .*/\1/p' "$TMP/$name.out")
    first=$(ls "$TMP/$name"/p."$child".hpf.* 2>/dev/null | head -1)
    if [ -n "$child" ] && [ -n "$first" ]; then
        check "$name" interval_child "$first" "$parent"
        check "$name-child-exit" forked_exit "$TMP/$name/p.$child.hpf" "$parent"
    else
        bad "$name" "no interval dump of the child: $(ls "$TMP/$name" | tr '\n' ' ')"
    fi
fi
