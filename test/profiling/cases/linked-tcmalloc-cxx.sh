# tcmalloc's own operator new and delete, linked into sites_cxx.cc: exact numbers per site.
for cc in gcc clang; do
    cxx=g++
    [ $cc = clang ] && cxx=clang++
    name=linked-tcmalloc-cxx-$cc
    if build "$PBIN/$cc/sites_cxx-tcmalloc" $cxx -std=c++17 -O2 -g -fno-omit-frame-pointer test/profiling/sites_cxx.cc \
        -Wl,-Bstatic -ltcmalloc_minimal -Wl,-Bdynamic -lm -pthread; then
        if run "$name" "" "$PBIN/$cc/sites_cxx-tcmalloc"; then
            check "$name" cxx "$(first_profile "$TMP/$name")"
        fi
    else
        bad "$name" "cannot build sites_cxx.cc with tcmalloc"
    fi
done
