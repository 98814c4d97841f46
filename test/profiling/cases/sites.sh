# test/profiling/sites.c (gcc and clang builds, every unwinder) forks and dumps on a signal:
# every site's numbers exact in the parent's exit profile, API and signal dumps, and the child's.
for cc in gcc clang; do
    for unw in fp libunwind cfi; do
        name=sites-$cc-$unw
        if run "$name" "dump_signal=12:unwinder=$unw" "$PBIN/$cc/sites" fork signal; then
            # The parent's pid is the smaller one only most of the time: find it by its dumps.
            for f in "$TMP/$name"/p.*.hpf.1; do parent=$(basename "$f" | sed 's/^p\.\([0-9]*\)\.hpf\.1$/\1/'); done
            check "$name-exit" exit "$TMP/$name/p.$parent.hpf" deep
            check "$name-api" api "$TMP/$name/p.$parent.hpf.1"
            check "$name-signal" signal "$TMP/$name/p.$parent.hpf.2"
            child=$(ls "$TMP/$name" | sed -n 's/^p\.\([0-9]*\)\.hpf$/\1/p' | grep -vx "$parent" | head -1)
            check "$name-fork-child" child "$TMP/$name/p.$child.hpf" "$parent"
        fi
    done
done
