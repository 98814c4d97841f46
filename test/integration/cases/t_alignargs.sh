# test/progs/t_alignargs.c: memalign and aligned_alloc with alignments 0, 3, 24, 48, 100 at
# several sizes. Bare against the shim (gcc, clang, gcc under other shim options); stacked with
# each other allocator, answering as that allocator does alone (rules/*).
prog_checks t_alignargs
preload_checks t_alignargs rules
