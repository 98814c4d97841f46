# The exit profile waits for an interval dump in progress instead of being skipped: ten runs,
# every one leaves a complete exit profile.
build "$PBIN/gcc/exit_race" gcc -O1 -g test/profiling/exit_race.c
exit_profile_runs exit-race 10 "$PBIN/gcc/exit_race" dump_interval_ms=1
