# The program's descriptor numbers are its own under every unwinder (libunwind's pipe, which it
# checks addresses with, took 3 and 4, and a program's first file became 5).
build "$PBIN/gcc/fd_numbers" gcc -O2 -g test/profiling/fd_numbers.c
for unw in cfi fp libunwind; do
    run_says fd-numbers-$unw "unwinder=$unw" "fd numbers ok" "$PBIN/gcc/fd_numbers"
done
