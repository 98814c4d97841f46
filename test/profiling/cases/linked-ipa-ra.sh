# A caller of the program's own free that keeps a value in a register across the call, as gcc's
# -fipa-ra lets it when free is in the same file (test/profiling/ipa_ra.c): patching free would
# lose the value, so the shim forwards and says why. Without -fipa-ra the program is patched.
# Bare and under the shim: same status, same output.
for v in ipa-ra no-ipa-ra; do
    name=linked-$v
    extra=""
    [ $v = no-ipa-ra ] && extra="-fno-ipa-ra"
    bin=$PBIN/gcc/ipa_ra-$v
    # shellcheck disable=SC2086
    if ! build "$bin" gcc -O2 -g $extra test/profiling/ipa_ra.c; then
        bad "$name" "cannot build ipa_ra.c $extra"
        continue
    fi
    "$bin" >"$TMP/$name.bare" 2>&1
    bst=$?
    run_status "$name" "" "$bin"
    if [ $bst -ne 0 ] || [ $st -ne $bst ] || ! cmp -s "$TMP/$name.bare" "$TMP/$name.out"; then
        bad "$name" "bare status $bst, shim $st: $(head -c 300 "$TMP/$name.err" | tr '\n' ' ')"
    elif [ $v = ipa-ra ] && ! grep -q "not patched (.*keeps a value in a register" "$TMP/$name.err"; then
        bad "$name" "not said: $(head -c 300 "$TMP/$name.err")"
    elif [ $v = no-ipa-ra ] && grep -q "not patched" "$TMP/$name.err"; then
        bad "$name" "not patched: $(head -c 300 "$TMP/$name.err")"
    else
        ok "$name"
    fi
done
