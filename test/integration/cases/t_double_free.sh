# test/progs/t_double_free.c frees a block twice: glibc's own check aborts it bare; under the
# shim the expected outcome is the same SIGABRT after a "heapprof:" report on stderr.
for cc in gcc clang; do
    name="$cc/t_double_free"
    bin=$PROGS/$cc/t_double_free w=$TMP/$cc.t_double_free
    have_shim "$name" && have_prog "$name" "$bin" || continue
    run_in "$w.bare" "" $PROG_TIMEOUT "$bin"
    run_in "$w.shim" "$SHIM" $PROG_TIMEOUT "$bin"
    bst=$(cat "$w.bare/st") tst=$(cat "$w.shim/st")
    if [ "$bst" != 134 ]; then
        bad "$name" "bare run: expected SIGABRT from glibc, got $(describe "$bst")"
    elif [ "$tst" != 134 ]; then
        bad "$name" "under shim: expected SIGABRT like bare, got $(describe "$tst"); stderr: $(excerpt "$w.shim/err")"
    elif ! grep -q '^heapprof:' "$w.shim/err"; then
        bad "$name" "under shim: no line starting 'heapprof:' on stderr: $(excerpt "$w.shim/err")"
    elif ! cmp -s "$w.bare/out" "$w.shim/out"; then
        bad "$name" "under shim: stdout differs: $(excerpt "$w.shim/out")"
    else
        ok "$name"
    fi
done
