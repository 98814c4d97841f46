# A vfork child killed while it allocates leaves its parent's profiling intact.
build "$PBIN/gcc/vfork_kill" gcc -O1 -g -pthread test/profiling/vfork_kill.c
name=vfork-kill
if run "$name" "" "$PBIN/gcc/vfork_kill"; then
    if ! grep -q "child killed by 15" "$TMP/$name.out" || ! grep -q "parent TERM SIG_DFL" "$TMP/$name.out"; then
        bad "$name" "$(tr '\n' ' ' <"$TMP/$name.out")"
    elif [ "$(ls "$TMP/$name" | wc -l)" -ne 1 ]; then
        bad "$name" "files: $(ls "$TMP/$name" | tr '\n' ' '); stderr: $(head -c 200 "$TMP/$name.err")"
    else
        check "$name" vfork_kill "$(first_profile "$TMP/$name")"
    fi
fi
