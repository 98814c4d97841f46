# Allocators linked into the program itself (the executable defines malloc, so LD_PRELOAD cannot
# come first): sites.c with an allocator of its own, a wrapper of glibc's, jemalloc and tcmalloc
# linked statically (test/profiling/build.sh). The shim patches them; the numbers are exact.
for cc in gcc clang; do
    for al in own own8 wrap jemalloc tcmalloc; do
        name=linked-$al-$cc
        if ! have_prog "$name" "$PBIN/$cc/sites-$al"; then
            continue
        elif ! nm -D --defined-only "$PBIN/$cc/sites-$al" | grep -q ' T malloc$'; then
            bad "$name" "the executable does not define malloc"
            continue
        fi
        if run "$name" "dump_signal=12" "$PBIN/$cc/sites-$al" fork signal; then
            for f in "$TMP/$name"/p.*.hpf.1; do parent=$(basename "$f" | sed 's/^p\.\([0-9]*\)\.hpf\.1$/\1/'); done
            check "$name-exit" exit "$TMP/$name/p.$parent.hpf"
            check "$name-signal" signal "$TMP/$name/p.$parent.hpf.2"
            child=$(ls "$TMP/$name" | sed -n 's/^p\.\([0-9]*\)\.hpf$/\1/p' | grep -vx "$parent" | head -1)
            check "$name-fork-child" child "$TMP/$name/p.$child.hpf" "$parent"
            if grep -q . "$TMP/$name.err"; then bad "$name-quiet" "$(head -c 300 "$TMP/$name.err")"; else ok "$name-quiet"; fi
        fi
    done
done
