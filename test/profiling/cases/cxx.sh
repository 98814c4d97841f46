# test/profiling/sites_cxx.cc (gcc and clang): operator new and delete in every form, exact
# numbers per site.
for cc in gcc clang; do
    if run "cxx-$cc" "" "$PBIN/$cc/sites_cxx"; then
        check "cxx-$cc" cxx "$(first_profile "$TMP/cxx-$cc")"
    fi
done
