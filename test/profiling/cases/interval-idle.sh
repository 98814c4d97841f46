# An idle program (sleep, 450 ms) at dump_interval_ms=100 leaves one interval dump, not one per
# tick.
name=interval-idle
if run "$name" "dump_interval_ms=100" sleep 0.45; then
    n=$(dumps_in "$TMP/$name")
    if [ "$n" -eq 1 ]; then ok "$name"; else bad "$name" "$n interval dumps, expected 1"; fi
fi
