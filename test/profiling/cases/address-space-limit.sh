# Under an address-space limit (ulimit -v) the tables take at most a sixteenth of it (78 MiB:
# 131072 contexts, with HIB table entries of 184 bytes), said only with verbosity=2; the
# profile is exact.
# timeout: 300
for verbosity in 1 2; do
    name=address-space-limit-v$verbosity
    fresh "$name"
    (ulimit -v 80000 && HEAPPROF_OPTIONS="output=$TMP/$name/p.%p.hpf:dump_signal=12:verbosity=$verbosity" \
        LD_PRELOAD="$SHIM" "$PBIN/gcc/sites" signal >/dev/null 2>"$TMP/$name.err")
    st=$?
    said=$(grep -c "^heapprof: tables for 131072 contexts and 8192 HIB table entries .* to fit the address-space limit (ulimit -v) of 78 MiB$" "$TMP/$name.err")
    if [ $st -ne 0 ]; then
        bad "$name" "status $st: $(head -c 300 "$TMP/$name.err")"
    elif [ "$said" -ne $((verbosity - 1)) ]; then
        bad "$name" "said $said times at verbosity $verbosity: $(head -c 300 "$TMP/$name.err")"
    else
        check "$name" exit "$(first_profile "$TMP/$name")"
    fi
done
