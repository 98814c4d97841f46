# A library's constructor allocates from the program's own allocator (linked in) before the
# shim's constructor would run in the loader's usual order: the shim must have patched it first
# (-z initfirst), or those blocks are missing and their frees look foreign.
if ! build "$PBIN/gcc/libctor_lib.so" gcc -O1 -g -fPIC -shared test/profiling/ctor_lib.c; then
    bad ctor-alloc "cannot build ctor_lib.c"
    return
fi
for al in own jemalloc; do
    name=ctor-alloc-$al
    case $al in
    own) extra="test/profiling/own_malloc.c" ;;
    jemalloc) extra="-Wl,-Bstatic -ljemalloc_pic -Wl,-Bdynamic -lm -ldl -lstdc++ -pthread" ;;
    esac
    # shellcheck disable=SC2086
    if ! build "$PBIN/gcc/ctor_alloc-$al" gcc -O1 -g test/profiling/ctor_alloc.c $extra \
        -L"$PBIN/gcc" -lctor_lib -Wl,-rpath,"$PBIN/gcc"; then
        bad "$name" "cannot build ctor_alloc.c with $al"
        continue
    fi
    if run "$name" "" "$PBIN/gcc/ctor_alloc-$al"; then
        check "$name" ctor_alloc "$(first_profile "$TMP/$name")"
        if grep -q . "$TMP/$name.err"; then bad "$name-quiet" "$(head -c 300 "$TMP/$name.err")"; else ok "$name-quiet"; fi
    fi
done
