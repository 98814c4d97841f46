# A thread that calls _exit while the main thread's exit is writing the final profile waits for
# it (a few seconds at most) instead of ending the process under it: five runs, every one leaves
# a complete exit profile.
# timeout: 300
build "$PBIN/gcc/exit_during_dump" gcc -O1 -g -pthread -fno-omit-frame-pointer test/profiling/exit_during_dump.c
exit_profile_runs exit-during-dump 5 "$PBIN/gcc/exit_during_dump"
