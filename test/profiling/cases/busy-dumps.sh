# Periodic dumps while four threads allocate and free at full speed: each dump is one moment
# (its summary agrees with its contexts), as is the exit profile; also with blocks freed by
# other threads than their own (busy-dumps-shared).

# Every dump takes all the threads' caches at one moment, or a free is counted without its
# allocation (alloc_count one above allocs).
name=busy-dumps
have_prog "$name" "$PBIN/gcc/busy_dumps" || return
if run "$name" "dump_interval_ms=25:peak_slack_kb=1" "$PBIN/gcc/busy_dumps"; then
    check_dumps "$name" consistent 5 "$TMP/$name"/p.*.hpf*
fi
name=busy-dumps-shared
if run "$name" "dump_interval_ms=5:peak_slack_kb=1" "$PBIN/gcc/busy_dumps" shared; then
    check_dumps "$name" consistent 20 "$TMP/$name"/p.*.hpf*
fi
