# Evictions from a tiny HIB table are merged back exactly; a program that closes every
# descriptor and opens its own file does not get profile records written into it.
name=evict
if have_prog "$name" "$PBIN/gcc/evict" &&
    run "$name" "hib_table_size=16:hib_table_ways=2:thread_cache_size=16:stack_depth=256" "$PBIN/gcc/evict" "$TMP/evict-own.txt"; then
    check "$name" evict "$(first_profile "$TMP/$name")"
fi
