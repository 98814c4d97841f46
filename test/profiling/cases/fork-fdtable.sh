# A forked child that starts a thread has its descriptor table grown up to the shim's own
# descriptor numbers before the second thread runs (growing it later, with two threads, made
# the kernel wait for an RCU grace period: 14 ms a child here).
build "$PBIN/gcc/fork_fdtable" gcc -O1 -g -pthread test/profiling/fork_fdtable.c
name=fork-fdtable
if run "$name" "" "$PBIN/gcc/fork_fdtable"; then
    nofile=$(ulimit -n)
    want=1000
    [ "$nofile" != unlimited ] && [ $((nofile / 4 * 3)) -lt $want ] && want=$((nofile / 4 * 3))
    got=$(sed -n 's/^fdsize //p' "$TMP/$name.out")
    if [ -n "$got" ] && [ "$got" -gt "$want" ]; then ok "$name"; else bad "$name" "FDSize '$got' in the child, expected above $want"; fi
fi
