# A library closed before the dump is still named in the profile.
build "$PBIN/gcc/libunload_plugin.so" gcc -O1 -g -fPIC -shared test/profiling/unload_plugin.c
build "$PBIN/gcc/unload" gcc -O1 -g test/profiling/unload.c
name=unload
if run "$name" "" "$PBIN/gcc/unload" "$PBIN/gcc/libunload_plugin.so"; then
    check "$name" unload "$(first_profile "$TMP/$name")"
fi
