# Allocation calls that succeed leave errno alone under every unwinder, with dumps on the way
# (libunwind's pipe reads left EAGAIN in it).
build "$PBIN/gcc/errno_kept" gcc -O2 -g -pthread -I"$HP_INC" test/profiling/errno_kept.c
for unw in cfi fp libunwind; do
    run_says errno-kept-$unw "unwinder=$unw:dump_signal=12" "errno kept" "$PBIN/gcc/errno_kept"
done
