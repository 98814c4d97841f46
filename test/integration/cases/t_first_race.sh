# test/progs/t_first_race.c: 16 threads from a constructor and 16 from main race the first
# allocations. Bare against the shim (gcc, clang, gcc under other shim options); stacked with
# each other allocator, either one first.
prog_checks t_first_race
preload_checks t_first_race
