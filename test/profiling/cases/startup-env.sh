# The program starts with its environment, arguments and name (the shim's constructor comes
# before libc's initialiser), under each unwinder and with an allocator preloaded first.
build "$PBIN/gcc/startup_env" gcc -O1 -g test/profiling/startup_env.c
for pre in "" jemalloc tcmalloc; do
    for unw in cfi libunwind; do
        name=startup-env${pre:+-$pre}-$unw
        preload=$SHIM
        if [ -n "$pre" ]; then
            lib=$(lib_of $pre)
            if [ -z "$lib" ]; then bad "$name" "lib$pre not installed"; continue; fi
            preload="$lib $SHIM"
        fi
        fresh "$name"
        if STARTUP_ENV_CHECK=yes HEAPPROF_OPTIONS="output=$TMP/$name/p.%p.hpf:unwinder=$unw" LD_PRELOAD="$preload" \
            "$PBIN/gcc/startup_env" arg >"$TMP/$name.out" 2>"$TMP/$name.err" && grep -qx ok "$TMP/$name.out" &&
            [ -f "$(first_profile "$TMP/$name")" ]; then
            ok "$name"
        else
            bad "$name" "$(cat "$TMP/$name.out" "$TMP/$name.err" | head -c 300 | tr '\n' ' ')"
        fi
    done
done
