# A worker that puts itself under a seccomp filter that kills on system calls it does not list
# and refuses every open (man-db's and OpenSSH's sandboxes): the shim neither gets it killed nor
# loses what it allocated after the filter, under every unwinder.

# The profile is made before the filter and the exit profile written into it; evict fills it
# with evicted records under the filter. libunwind gives way to the cfi walk. tsync filters every
# thread, the interval-dump thread too, which must stop rather than sleep again (its sleep is
# not in the list: it was killed at its next tick).
build "$PBIN/gcc/sandbox" gcc -O1 -g -fno-omit-frame-pointer -pthread test/profiling/sandbox.c
for mode in prctl syscall tsync evict; do
    for unw in cfi fp libunwind; do
        name=sandbox-$mode-$unw
        opts="unwinder=$unw"
        [ $mode = evict ] && opts="$opts:hib_table_size=16:hib_table_ways=2"
        [ $mode = tsync ] && opts="$opts:dump_interval_ms=1"
        run_status "$name" "$opts" "$PBIN/gcc/sandbox" $mode
        if [ $st = 3 ] || [ $st = 4 ]; then
            skip "$name" "seccomp filters cannot be installed here ($(head -c 200 "$TMP/$name.err"))"
        elif [ $st != 0 ] || [ "$(cat "$TMP/$name.out")" != done ]; then
            bad "$name" "exit status $st ($(kill -l $((st - 128)) 2>/dev/null)), output '$(head -c 200 "$TMP/$name.out")', $(head -c 300 "$TMP/$name.err")"
        elif [ "$(ls "$TMP/$name" | grep -cv '\.hpf\.[0-9]*$')" -ne 1 ] ||
            { [ $mode != tsync ] && [ "$(ls "$TMP/$name" | wc -l)" -ne 1 ]; }; then
            # (tsync: interval dumps from before the filter, on a loaded machine, are no fault)
            bad "$name" "files: $(ls "$TMP/$name" | tr '\n' ' '), expected one profile"
        else
            check "$name" "sandbox_$mode" "$TMP/$name"/p.*.hpf
        fi
    done
done
