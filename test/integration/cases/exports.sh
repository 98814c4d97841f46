# Exported symbols: nm -D --defined-only of the built shim lists exactly the global: names of
# its version script, and every one of them is defined in shim/interpose/ (its files built here
# without link-time optimisation, whose objects would not list what top-level assembly defines).
MAP=$ROOT/shim/interpose/libheapprof.map

name=exports
if have_shim "$name"; then
    if [ ! -f "$MAP" ]; then
        bad "$name" "$MAP is missing"
    else
        objs=() built=1
        mkdir -p "$TMP/interpose"
        for src in "$ROOT"/shim/interpose/*.c; do
            objs+=("$TMP/interpose/$(basename "$src" .c).o")
            if ! msg=$(${CC:-cc} -std=gnu11 -D_GNU_SOURCE -fPIC -pthread -I"$ROOT/shim" -I"$ROOT" \
                -I"$ROOT/include" -c "$src" -o "${objs[-1]}" 2>&1); then
                bad "$name" "cannot build $src: $(echo "$msg" | head -3 | tr '\n' ' ')"
                built=0
                break
            fi
        done
        if [ "$built" = 1 ]; then
            if msg=$(perl "$ROOT/test/integration/check_exports.pl" "$MAP" "$SHIM" "${objs[@]}" 2>&1); then
                ok "$name"
            else
                bad "$name" "$(echo "$msg" | tr '\n' ' ')"
            fi
        fi
    fi
fi
