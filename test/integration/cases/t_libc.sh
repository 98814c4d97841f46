# test/progs/t_libc.c: libc-internal allocations crossing to the program and back. Bare against
# the shim (gcc, clang, gcc under other shim options, an ASan+UBSan build); stacked with each
# other allocator, either one first.
prog_checks t_libc
preload_checks t_libc
