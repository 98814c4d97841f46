# A program with its own allocator that also defines (and exports) heapprof_dump, say as a
# fallback for runs without the shim: its allocator is patched as any other, not taken for
# another copy of the shim (which the shim would only forward to).

# Its own heapprof_dump answers the program's call (-1): the signal's dump is the first.
for cc in gcc clang; do
    name=linked-own-api-$cc
    if build "$PBIN/$cc/sites-ownapi" $cc -O2 -g -fno-omit-frame-pointer -pthread -I"$HP_INC" -rdynamic -DOWN_DEFINES_API \
        test/profiling/sites.c test/profiling/own_malloc.c; then
        fresh "$name"
        if HEAPPROF_OPTIONS="output=$TMP/$name/p.%p.hpf:dump_signal=12" LD_PRELOAD="$SHIM" \
            "$PBIN/$cc/sites-ownapi" signal >/dev/null 2>"$TMP/$name.err"; then
            f=$(first_profile "$TMP/$name")
            check "$name-exit" exit "$f"
            check "$name-signal" signal "$f.1"
        else
            bad "$name" "exit status $?: $(head -c 300 "$TMP/$name.err")"
        fi
    else
        bad "$name" "cannot build sites.c with own_malloc.c -DOWN_DEFINES_API"
    fi
done
