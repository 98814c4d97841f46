# Crashes: abort() (where an uncaught std::bad_alloc ends) and a fault still leave the profile,
# and still end the process by that signal; so does SIGTERM to a handler of the program's that
# restores SIG_DFL and raises it again.
# timeout: 300
for sig in ABRT SEGV RERAISE RESETHAND SYSV; do
    name=killed-$sig
    have_prog "$name" "$PBIN/gcc/killed" || continue
    fresh "$name"
    (ulimit -c 0; HEAPPROF_OPTIONS="output=$TMP/$name/p.%p.hpf" LD_PRELOAD="$SHIM" exec "$PBIN/gcc/killed" $sig) >"$TMP/$name.out" 2>"$TMP/$name.err"
    killed_result "$name" $sig $? killed_early
done
