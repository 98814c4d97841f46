# glibc's malloc debugging library (libc_malloc_debug) preloaded before the shim, with
# MALLOC_CHECK_ (it serves the blocks itself: the shim patches it) or MALLOC_TRACE (it hands
# every call to __libc_malloc, the shim's); and after the shim, passed by with one warning.

# It defines malloc and friends as hidden symbols of glibc's version (malloc@GLIBC_2.2.5):
# programs reach them, dlsym does not. Patched, the profile is exact (before, it came out
# empty); handing on, every block is there and the library's wrapper frame is left off the top
# of each stack (it was on every one: every site checked exactly). After the shim, the shim's
# backend is glibc's malloc.
for order in before after; do
    for check_env in MALLOC_CHECK_=3 MALLOC_TRACE=/dev/null; do
        name=malloc-debug-$order-${check_env%%=*}
        if [ $order = before ]; then pre="$MALLOC_DEBUG $SHIM"; else pre="$SHIM $MALLOC_DEBUG"; fi
        fresh "$name"
        if env "$check_env" HEAPPROF_OPTIONS="output=$TMP/$name/p.%p.hpf" LD_PRELOAD="$pre" \
            "$PBIN/gcc/sites" >"$TMP/$name.out" 2>"$TMP/$name.err"; then
            check "$name" exit "$(first_profile "$TMP/$name")"
            if [ $order = after ]; then
                # One line says the library's checks see nothing there.
                if [ "$(wc -l <"$TMP/$name.err")" -eq 1 ] &&
                    grep -q "^heapprof: $MALLOC_DEBUG comes after the shim in LD_PRELOAD: .* preload it before the shim$" "$TMP/$name.err"; then
                    ok "$name-warns"
                else
                    bad "$name-warns" "$(head -c 300 "$TMP/$name.err")"
                fi
            elif grep -q . "$TMP/$name.err"; then bad "$name-quiet" "$(head -c 300 "$TMP/$name.err")"; else ok "$name-quiet"; fi
        else
            bad "$name" "exit status $?: $(head -c 300 "$TMP/$name.err")"
        fi
    done
done
