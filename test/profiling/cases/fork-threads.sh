# fork while four other threads are alive with unflushed caches: every profile of the children
# counts the other threads' blocks exactly once, with the main thread's context whose blocks
# another thread freed still at its true maximum.

# The children: two API dumps and the exit of one (which then runs threads of its own on the
# caches the dumps folded), another child's and its grandchild's; the exec'd child leaves only
# the new image's profile.
build "$PBIN/gcc/fork_threads" gcc -O1 -g -fno-omit-frame-pointer -pthread -I"$HP_INC" test/profiling/fork_threads.c
name=fork-threads
if run "$name" "" "$PBIN/gcc/fork_threads" /bin/true; then
    o=$TMP/$name.out
    parent=$(sed -n 's/^parent //p' "$o") dump=$(sed -n 's/^dump //p' "$o")
    forker=$(sed -n 's/^fork //p' "$o") grand=$(sed -n 's/^grandchild //p' "$o")
    exec=$(sed -n 's/^exec //p' "$o")
    files=$(ls "$TMP/$name" | tr '\n' ' ')
    want="p.$dump.hpf p.$dump.hpf.1 p.$dump.hpf.2 p.$exec.hpf p.$forker.hpf p.$grand.hpf p.$parent.hpf"
    if ! grep -qx "fork_threads done" "$o"; then
        bad "$name" "$(head -c 300 "$o" "$TMP/$name.err" | tr '\n' ' ')"
    elif [ "$(echo $files | tr ' ' '\n' | sort | tr '\n' ' ')" != "$(echo $want | tr ' ' '\n' | sort | tr '\n' ' ')" ]; then
        bad "$name" "files: $files; expected $want"
    else
        check "$name-parent" fork_threads "$TMP/$name/p.$parent.hpf" parent
        check "$name-child-api" fork_threads "$TMP/$name/p.$dump.hpf.1" dump "$parent"
        check "$name-child-api-2" fork_threads "$TMP/$name/p.$dump.hpf.2" dump "$parent"
        check "$name-child-exit" fork_threads "$TMP/$name/p.$dump.hpf" dump-exit "$parent"
        check "$name-child-forks" fork_threads "$TMP/$name/p.$forker.hpf" fork "$parent"
        check "$name-grandchild" fork_threads "$TMP/$name/p.$grand.hpf" grandchild "$forker"
    fi
fi
