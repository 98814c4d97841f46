# Exported symbols: nm -D --defined-only of the built shim lists exactly the global: names of
# its version script.
MAP=$ROOT/shim/libheapprof.map

name=exports
if have_shim "$name"; then
    if [ ! -f "$MAP" ]; then
        bad "$name" "$MAP is missing"
    elif msg=$(perl "$ROOT/test/integration/check_exports.pl" "$MAP" "$SHIM" 2>&1); then
        ok "$name"
    else
        bad "$name" "$(echo "$msg" | tr '\n' ' ')"
    fi
fi
