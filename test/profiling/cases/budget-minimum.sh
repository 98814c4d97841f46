# At the smallest metadata budget (16 MiB) the default max_contexts and hib_table_size do not
# fit (19 MiB of tables): they are made smaller, said in one line, and the profile is exact
# (profiling was off before).
# timeout: 300
name=budget-minimum
fresh "$name"
HEAPPROF_OPTIONS="output=$TMP/$name/p.%p.hpf:dump_signal=12:metadata_budget_mb=16" LD_PRELOAD="$SHIM" \
    "$PBIN/gcc/sites" signal >/dev/null 2>"$TMP/$name.err"
st=$?
case $(grep '^heapprof:' "$TMP/$name.err") in
"heapprof: tables for 262144 contexts and 16384 HIB table entries (max_contexts=1048576, hib_table_size=65536) to fit metadata_budget_mb of 16 MiB")
    [ $st -eq 0 ] && check "$name" exit "$(first_profile "$TMP/$name")" || bad "$name" "status $st" ;;
*) bad "$name" "status $st, expected one line from heapprof: $(head -c 300 "$TMP/$name.err")" ;;
esac
