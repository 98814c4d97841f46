# test/progs/t_late_free.cc: destructors, atexit handlers and thread-local destructors that free
# after main. Bare against the shim (gcc, clang, gcc under other shim options); stacked with
# each other allocator, either one first.
prog_checks t_late_free
preload_checks t_late_free
