# A child that gives up root (or moves into another root) before it allocates and ends: its
# profile is made before the change, in a directory only root may write to.
if [ "$(id -u)" != 0 ]; then
    skip drop-privs "needs root"
    return
fi
build "$PBIN/gcc/drop_privs" gcc -O1 -g -fno-omit-frame-pointer test/profiling/drop_privs.c
mkdir -p "$TMP/empty-root"
for mode in exit exec evict chroot; do
    name=drop-privs-$mode
    opts=""
    [ $mode = evict ] && opts="hib_table_size=16:hib_table_ways=2"
    if run "$name" "$opts" "$PBIN/gcc/drop_privs" $mode "$TMP/empty-root"; then
        child=$(sed -n 's/^child \([0-9]*\) status 0$/\1/p' "$TMP/$name.out")
        if [ -z "$child" ] && grep -q "Operation not permitted" "$TMP/$name.err"; then
            skip "$name" "this root may not change its ids or root (a container without CAP_SETUID?)"
        elif [ -z "$child" ]; then
            bad "$name" "the child failed: $(head -c 300 "$TMP/$name.out" "$TMP/$name.err" | tr '\n' ' ')"
        elif [ "$(ls "$TMP/$name" | wc -l)" -ne 2 ]; then
            bad "$name" "files: $(ls "$TMP/$name" | tr '\n' ' '), expected the parent's and the child's"
        else
            check "$name" "drop_privs_$mode" "$TMP/$name/p.$child.hpf"
        fi
    fi
done
