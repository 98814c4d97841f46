# fork, then exec at once, in a threaded program with a full HIB table: no profile of the
# replaced image is left behind, only the parent's and the exec'd program's, both complete.

# fork-exec-rounds: the same after each of 128 rounds of 16 new contexts, so that the parent has
# a spool file and any number of evicted records waiting in memory at some fork: 130 files (the
# parent's, 129 of /bin/true), and the parent's 2,048 contexts exact.
build "$PBIN/gcc/fork_exec" gcc -O1 -g -fno-omit-frame-pointer -pthread test/profiling/fork_exec.c
for rounds in 0 128; do
    name=fork-exec
    opts="hib_table_size=16:hib_table_ways=2"
    want=2
    if [ $rounds != 0 ]; then
        name=fork-exec-rounds opts="$opts:thread_cache_size=16" want=130
    fi
    if run "$name" "$opts" "$PBIN/gcc/fork_exec" $rounds; then
        files=$(ls "$TMP/$name")
        nbad=0
        for f in $files; do "$REPORT" "$TMP/$name/$f" >/dev/null 2>&1 || nbad=$((nbad + 1)); done
        if [ "$(echo "$files" | wc -l)" -ne $want ] || [ $nbad -ne 0 ] || ! grep -q "child status 0" "$TMP/$name.out"; then
            bad "$name" "$(echo "$files" | wc -l) files, $want expected, $nbad unreadable; $(head -c 200 "$TMP/$name.out")"
        elif [ $rounds != 0 ]; then
            check "$name" fork_exec_rounds "$(ls -S "$TMP/$name"/p.*.hpf | head -1)"
        else
            ok "$name"
        fi
    fi
done
