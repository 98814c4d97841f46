# A signal handler allocating and freeing while main allocates at full speed, so that most of
# its calls interrupt the shim recording one of main's: every block recorded at its site, with
# its free (gcc and clang, every unwinder), over an allocator handlers may call (bump_malloc.c).

# With cfi and fp nothing goes unrecorded (strict); libunwind's own allocations are not the
# program's.
build "$PBIN/gcc/libbump_malloc.so" gcc -O2 -fPIC -shared test/profiling/bump_malloc.c || bad build-gcc bump_malloc.c
run_after=$PBIN/gcc/libbump_malloc.so
for cc in gcc clang; do
    build "$PBIN/$cc/handler_allocs" $cc -O2 -g -fno-omit-frame-pointer test/profiling/handler_allocs.c ||
        bad "build-$cc" "handler_allocs.c"
    for unw in cfi fp libunwind; do
        name=handler-allocs-$cc-$unw
        if run "$name" "unwinder=$unw" "$PBIN/$cc/handler_allocs"; then
            strict=strict
            [ $unw = libunwind ] && strict=
            # shellcheck disable=SC2046
            check "$name" handler "$(first_profile "$TMP/$name")" $(cat "$TMP/$name.out") $strict
        fi
    done
done
run_after=""
