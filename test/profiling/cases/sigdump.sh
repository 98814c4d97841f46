# heapprof_dump() from a signal handler that interrupts the shim neither hangs nor loses counts.
build "$PBIN/gcc/sigdump" gcc -O2 -g -I"$HP_INC" test/profiling/sigdump.c
name=sigdump
if run "$name" "" "$PBIN/gcc/sigdump"; then
    n=$(dumps_in "$TMP/$name")
    if [ "$n" -ge 2 ]; then
        check "$name" sigdump "$(first_profile "$TMP/$name")"
    else
        bad "$name" "$n dumps written, expected at least 2"
    fi
fi
