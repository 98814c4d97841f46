# The shim opened by dlopen after clearenv: its constructor must not run the program's preinit
# functions again (it does that only when it runs before libc's initialiser).
build "$PBIN/gcc/dlopen_clearenv" gcc -O1 -g test/profiling/dlopen_clearenv.c -ldl
name=dlopen-clearenv
if (cd "$TMP" && "$PBIN/gcc/dlopen_clearenv" "$SHIM") >"$TMP/$name.out" 2>"$TMP/$name.err" && grep -qx ok "$TMP/$name.out"; then
    ok "$name"
else
    bad "$name" "$(cat "$TMP/$name.out" "$TMP/$name.err" | head -c 300 | tr '\n' ' ')"
fi
