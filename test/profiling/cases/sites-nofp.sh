# sites.c built without frame pointers (as Debian builds its packages): the cfi and libunwind
# walks still see every frame to main.
for cc in gcc clang; do
    for unw in libunwind cfi; do
        name=sites-nofp-$cc-$unw
        if run "$name" "dump_signal=12:unwinder=$unw" "$PBIN/$cc/sites-nofp" signal; then
            check "$name" exit "$(first_profile "$TMP/$name")" deep
        fi
    done
done
