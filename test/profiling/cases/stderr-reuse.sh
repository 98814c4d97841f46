# A program that closes stderr and opens a file of its own as descriptor 2: the shim's messages
# stay out of a data file, and go into a log (opened for appending).
build "$PBIN/gcc/stderr_reuse" gcc -O1 -g test/profiling/stderr_reuse.c
for mode in data log; do
    name=stderr-reuse-$mode
    if run "$name" "verbosity=2" "$PBIN/gcc/stderr_reuse" $mode "$TMP/$name.file"; then
        got=$(cat "$TMP/$name.file")
        case $mode in
        data) want=DATA ;;
        log) want="DATAheapprof: profile written to $TMP/$name/p.*.hpf" ;;
        esac
        # shellcheck disable=SC2254
        case $got in
        $want) [ "$(ls "$TMP/$name" | wc -l)" -eq 1 ] && ok "$name" || bad "$name" "no profile" ;;
        *) bad "$name" "the file holds '$(echo "$got" | head -c 200)'" ;;
        esac
    fi
done
