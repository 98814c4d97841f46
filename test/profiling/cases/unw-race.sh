# unwinder=libunwind, first allocations by four threads at once: one loads libunwind, the others
# wait for it (the previous shim gave the allocations made meanwhile one-frame stacks).
build "$PBIN/gcc/unw_race" gcc -O1 -g -pthread test/profiling/unw_race.c
for i in 1 2; do
    name=unw-race-$i
    if run "$name" "unwinder=libunwind" "$PBIN/gcc/unw_race"; then
        check "$name" unw_race "$(first_profile "$TMP/$name")"
    fi
done
