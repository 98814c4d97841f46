# A program started under a seccomp filter it inherited (installed before exec, unseen by the
# shim) that kills on mincore and copy_file_range: the shim reads the filter from
# /proc/self/status and keeps away from both (they killed every such process at its exit dump).

# With libunwind, which calls mincore, the cfi walk takes over.
build "$PBIN/gcc/filtered" gcc -O1 -g -fno-omit-frame-pointer -pthread test/profiling/filtered.c
for unw in cfi fp libunwind; do
    name=filtered-$unw
    run_status "$name" "unwinder=$unw" "$PBIN/gcc/filtered"
    if [ $st = 3 ]; then
        skip "$name" "seccomp filters cannot be installed here ($(head -c 200 "$TMP/$name.err"))"
    elif [ $st != 0 ] || [ "$(cat "$TMP/$name.out")" != done ]; then
        bad "$name" "exit status $st ($(kill -l $((st - 128)) 2>/dev/null)), $(head -c 300 "$TMP/$name.err")"
    elif [ "$(ls "$TMP/$name" | wc -l)" -ne 1 ]; then
        bad "$name" "files: $(ls "$TMP/$name" | tr '\n' ' '), expected one profile"
    else
        check "$name" filtered "$TMP/$name"/p.*.hpf
    fi
done
