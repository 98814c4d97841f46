# sites.c with each allocator preloaded before the shim (it comes first in symbol lookup: the
# shim patches it, backend/patch.c): exact numbers at exit.
for be in jemalloc tcmalloc mimalloc; do
    name=preloaded-first-$be
    if pre=$(lib_of $be); then
        sites_with "$name" "$pre $SHIM" "" "$PBIN/gcc/sites"
    else
        bad "$name" "lib$be not installed"
    fi
done

# A program built without -fPIE whose code takes the allocation functions' addresses (PLT
# entries of its own stand for them, unbound while binding is lazy), jemalloc preloaded first.
build "$PBIN/gcc/sites-nopie" gcc -O2 -g -fno-omit-frame-pointer -fno-pie -no-pie -Wl,-z,lazy -pthread -I"$HP_INC" \
    test/profiling/sites.c test/profiling/take_addr.c
sites_with preloaded-first-nopie "$(lib_of jemalloc) $SHIM" "" "$PBIN/gcc/sites-nopie"
