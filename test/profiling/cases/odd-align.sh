# An alignment that is not a power of two is the allocator's to take or refuse: with the shim
# in front, each backend answers as it does alone.
# timeout: 300
build "$PBIN/gcc/odd_align" gcc -O1 test/profiling/odd_align.c || bad build-gcc odd_align.c
for lib in "" "$JEMALLOC" "$TCMALLOC" "$MIMALLOC"; do
    name=odd-align-${lib:+$(basename "$lib" | sed 's/\.so.*//')}
    [ -n "$lib" ] || name=odd-align-glibc
    alone=$(LD_PRELOAD="$lib" "$PBIN/gcc/odd_align" 2>&1)
    under=$(HEAPPROF_OPTIONS=output= LD_PRELOAD="$SHIM${lib:+ $lib}" "$PBIN/gcc/odd_align" 2>&1)
    if [ -n "$alone" ] && [ "$alone" = "$under" ]; then ok "$name"; else bad "$name" "alone: $alone; under the shim: $under"; fi
done
