# A sanitizer runtime the user preloads (an uninstrumented program with an ASan-built library
# needs LD_PRELOAD=libasan.so.8 even bare) stays in front of the shim.
# timeout: 300
name=sanitized-user-preload
lib=$PBIN/gcc/asan_lib
if build "$lib/libasanlib.so" gcc -O1 -g -fsanitize=address -shared -fPIC test/profiling/asan_lib.c 2>"$TMP/$name.build" &&
    build "$lib/main" gcc -O1 -g -DMAIN test/profiling/asan_lib.c -L"$lib" -lasanlib -Wl,-rpath,"$lib" 2>>"$TMP/$name.build"; then
    asan=$(ldd "$lib/main" | awk '$1 ~ /^libasan\.so/ {print $1; exit}')
    fresh "$name"
    LD_PRELOAD="$asan" "$ROOT/scripts/heapprof-run" -q -o "$TMP/$name/p.%p.hpf" -- "$lib/main" 2>"$TMP/$name.err"
    st=$?
    if [ $st -ne 0 ]; then
        bad "$name" "exit status $st ($(head -c 300 "$TMP/$name.err"))"
    else
        check "$name" asan_lib "$(first_profile "$TMP/$name")"
    fi
else
    bad "$name" "build: $(head -c 200 "$TMP/$name.build")"
fi
