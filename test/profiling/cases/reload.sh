# A library loaded where a closed one was is unwound with its own rules (reload.c); closed
# libraries opened by a relative path are named in the profile too.
build "$PBIN/gcc/libreload_a.so" gcc -shared -fPIC -DFRAME=0x88 -DSIZE=1111 test/profiling/reload_plugin.S
build "$PBIN/gcc/libreload_b.so" gcc -shared -fPIC -DFRAME=0x1008 -DSIZE=2222 test/profiling/reload_plugin.S
build "$PBIN/gcc/reload" gcc -O1 -g test/profiling/reload.c
name=reload
rel=${PBIN#"$ROOT"/}/gcc
if run "$name" "" "$PBIN/gcc/reload" "$rel/libreload_a.so" "$rel/libreload_b.so"; then
    check "$name" reload "$(first_profile "$TMP/$name")"
fi
