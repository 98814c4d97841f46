# Aligned allocations on every backend: every pointer aligned as asked (Debian's mimalloc 2.0
# breaks that for some sizes on its own: the shim then aligns within a plain block), every
# allocation counted.
# timeout: 300
build "$PBIN/gcc/align_check" gcc -O2 -g test/profiling/align_check.c || bad build-gcc align_check.c
for be in next glibc jemalloc tcmalloc mimalloc; do
    name=aligned-backend-$be
    fresh "$name"
    if "$ROOT/scripts/heapprof-run" -q -o "$TMP/$name/p.%p.hpf" --backend $be -- "$PBIN/gcc/align_check" >"$TMP/$name.out" 2>"$TMP/$name.err"; then
        check "$name" align "$(first_profile "$TMP/$name")"
    else
        bad "$name" "exit status $?: $(head -c 300 "$TMP/$name.out") $(head -c 300 "$TMP/$name.err")"
    fi
done
