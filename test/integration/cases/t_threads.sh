# test/progs/t_threads.c: pthread_create paths: pthread_exit, cancellation, detached threads,
# user stacks. Bare against the shim (gcc, clang, gcc under other shim options); stacked with
# each other allocator, either one first.
prog_checks t_threads
preload_checks t_threads
