# The spool's records copied into an API dump and into forked children's profiles: by the
# kernel (copy_file_range), and by reads and writes under a seccomp filter the shim did not see
# installed (filtered: it kills on copy_file_range). Every profile holds all 32,768 blocks.
build "$PBIN/gcc/spool_copy" gcc -O1 -g -fno-omit-frame-pointer -pthread -I"$HP_INC" test/profiling/spool_copy.c
for mode in plain filtered; do
    name=spool-copy-$mode
    run_status "$name" "hib_table_size=16:hib_table_ways=2" "$PBIN/gcc/spool_copy" $mode
    if [ $st = 3 ]; then
        skip "$name" "seccomp filters cannot be installed here ($(head -c 200 "$TMP/$name.err"))"
        continue
    elif [ $st != 0 ] || [ "$(cat "$TMP/$name.out")" != done ]; then
        bad "$name" "exit status $st, $(head -c 300 "$TMP/$name.err")"
        continue
    fi
    files=$(ls "$TMP/$name" | grep -c 'hpf$')
    if [ "$files" -ne 3 ] || [ "$(dumps_in "$TMP/$name")" -ne 1 ]; then
        bad "$name" "files: $(ls "$TMP/$name" | tr '\n' ' '), expected three profiles and one dump"
        continue
    fi
    parent=$(ls "$TMP/$name" | sed -n 's/^p\.\([0-9]*\)\.hpf\.1$/\1/p')
    check "$name-api" spool_copy "$TMP/$name/p.$parent.hpf.1" api
    check "$name-exit" spool_copy "$TMP/$name/p.$parent.hpf" exit
    k=0
    for f in "$TMP/$name"/p.*.hpf; do
        [ "$f" = "$TMP/$name/p.$parent.hpf" ] && continue
        k=$((k + 1))
        check "$name-child$k" spool_copy "$f" exit
    done
done
