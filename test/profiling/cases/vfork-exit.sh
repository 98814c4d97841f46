# _exit in a vfork child writes nothing, and the parent's exit profile is whole.
build "$PBIN/gcc/vfork_exit" gcc -O1 -g test/profiling/vfork_exit.c
name=vfork-exit
if run "$name" "" "$PBIN/gcc/vfork_exit"; then
    n=$(ls "$TMP/$name" | wc -l)
    if [ "$n" -eq 1 ]; then
        check "$name" vfork_exit "$(first_profile "$TMP/$name")"
    else
        bad "$name" "$n files, expected the parent's profile only: $(ls "$TMP/$name" | tr '\n' ' ')"
    fi
fi
