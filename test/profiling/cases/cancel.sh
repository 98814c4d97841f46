# Workers cancelled (pthread_cancel) while dumps are written: every round ends, and the exit
# profile counts every block the workers made. A small thread cache keeps each worker moving
# entries out of it, which waits inside the shim while a dump is written.
build "$PBIN/gcc/cancel" gcc -O2 -g -pthread -I"$HP_INC" test/profiling/cancel.c
name=cancel
if run "$name" "thread_cache_size=16" "$PBIN/gcc/cancel"; then
    n=$(sed -n 's/^blocks \([0-9]*\)$/\1/p' "$TMP/$name.out")
    if [ -z "$n" ]; then
        bad "$name" "no block count in the output: $(head -c 200 "$TMP/$name.out")"
    else
        check "$name" cancel "$(first_profile "$TMP/$name")" "$n"
    fi
fi
