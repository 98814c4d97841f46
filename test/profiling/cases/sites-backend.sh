# sites.c on each allocator preloaded after the shim (its backend, "next"), and on glibc through
# backend=glibc: exact numbers at exit.
for be in glibc jemalloc tcmalloc mimalloc; do
    name=sites-backend-$be
    if [ $be = glibc ]; then
        sites_with "$name" "$SHIM" backend=glibc "$PBIN/gcc/sites"
    elif pre=$(lib_of $be); then
        sites_with "$name" "$SHIM $pre" "" "$PBIN/gcc/sites"
    else
        bad "$name" "lib$be not installed"
    fi
done
