# Allocation sites inlined into their callers, from both compilers: every inlined function has a
# frame of its own in the report, at its own line. Also with split DWARF (the skeleton unit in
# the program, the rest in a .dwo file beside it: built in its own directory).
for cc in gcc clang; do
    for dw in "" -split; do
        name=inlined$dw-$cc
        flags=-g
        [ -n "$dw" ] && flags="-g -gsplit-dwarf"
        mkdir -p "$PBIN/$cc"
        # shellcheck disable=SC2086
        if (cd "$PBIN/$cc" && build "inlined$dw" $cc -O2 $flags "$ROOT/test/profiling/inlined.c"); then
            if run "$name" "" "$PBIN/$cc/inlined$dw"; then
                check "$name" inlined "$(first_profile "$TMP/$name")" test/profiling/inlined.c
            fi
        else
            bad "$name" "cannot build inlined.c ($flags)"
        fi
    done
done
