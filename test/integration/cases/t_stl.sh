# test/progs/t_stl.cc: containers from 4 threads. Bare against the shim (gcc, clang, gcc under
# other shim options, an ASan+UBSan build); stacked with each other allocator, either one first.
prog_checks t_stl
preload_checks t_stl
