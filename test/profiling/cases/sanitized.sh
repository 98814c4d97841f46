# Programs built with sanitizers (gcc's runtimes are shared libraries, heapprof-run preloads
# them first; clang links its own into the program): the shim patches the sanitizer's allocator;
# status and output as bare, exact counts.
for cs in gcc:address gcc:thread gcc:leak clang:address clang:thread clang:memory clang:leak; do
    cc=${cs%%:*} san=${cs#*:}
    name=sanitized-$cc-$san
    if ! build "$PBIN/$cc/sanitized-$san" $cc -O1 -g -fsanitize=$san -pthread test/profiling/sanitized.c 2>"$TMP/$name.build"; then
        bad "$name" "build: $(head -c 200 "$TMP/$name.build")"
        continue
    fi
    fresh "$name"
    # halt_on_error: a report ends the run with an error status instead of going on.
    TSAN_OPTIONS=halt_on_error=1 timeout -k 5 120 "$ROOT/scripts/heapprof-run" -q -o "$TMP/$name/p.%p.hpf" -- \
        "$PBIN/$cc/sanitized-$san" >"$TMP/$name.out" 2>"$TMP/$name.err"
    st=$?
    if [ $st -ne 0 ]; then
        bad "$name" "exit status $st ($(head -c 300 "$TMP/$name.err"))"
    elif grep -q "Sanitizer" "$TMP/$name.err"; then
        bad "$name" "sanitizer report: $(grep -m1 -A3 "Sanitizer" "$TMP/$name.err" | tr '\n' ' ' | head -c 300)"
    else
        check "$name" sanitized "$(first_profile "$TMP/$name")"
    fi
done
