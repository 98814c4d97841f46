# heapprof-run warns about an allocator linked in under names of its own (Rust's jemallocator:
# _rjem_*), whose allocations the profile cannot show; not about others.
# timeout: 300
build "$PBIN/gcc/prefixed_alloc" gcc -O1 -g test/profiling/prefixed_alloc.c
name=heapprof-run-prefixed-allocator
have_prog "$name" "$PBIN/gcc/quick_exit" || return
fresh "$name"
"$ROOT/scripts/heapprof-run" -q -o "$TMP/$name/p.%p.hpf" -- "$PBIN/gcc/prefixed_alloc" 2>"$TMP/$name.err"
st=$?
"$ROOT/scripts/heapprof-run" -q -o "$TMP/$name/q.%p.hpf" -- "$PBIN/gcc/quick_exit" 2>"$TMP/$name.err2"
if [ $st -ne 0 ] || ! grep -q "heapprof-run: warning: .*_rjem_ prefix" "$TMP/$name.err"; then
    bad "$name" "status $st: $(head -c 300 "$TMP/$name.err")"
elif grep -q "heapprof-run: warning" "$TMP/$name.err2"; then
    bad "$name" "warned about a program without such an allocator: $(head -c 300 "$TMP/$name.err2")"
else
    ok "$name"
fi
