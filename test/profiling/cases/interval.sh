# Periodic dumps (dump_interval_ms=100) of a program that allocates now and then for ~300 ms,
# idles for 600 ms and allocates for ~300 ms more: several complete dumps, and no two in a row
# with the same totals (a tick at which nothing changed since the last one writes none).
build "$PBIN/gcc/interval_idle" gcc -O1 -g test/profiling/interval_idle.c
name=interval
if run "$name" "dump_interval_ms=100" "$PBIN/gcc/interval_idle"; then
    n=$(dumps_in "$TMP/$name")
    if [ "$n" -ge 3 ]; then
        check "$name-dump" interval "$(ls "$TMP/$name"/p.*.hpf.1 | head -1)"
        prev= same= i=1
        while [ -f "$(ls "$TMP/$name"/p.*.hpf.$i 2>/dev/null | head -1)" ]; do
            "$REPORT" --format json -o "$TMP/iv.json" "$(ls "$TMP/$name"/p.*.hpf.$i | head -1)" 2>/dev/null
            cur=$(python3 -c 'import json,sys; s=json.load(open(sys.argv[1]))["summary"]; print(s["total_allocs"], s["total_frees"], s["total_bytes"])' "$TMP/iv.json")
            [ "$cur" = "$prev" ] && same="$same $((i - 1))/$i"
            prev=$cur i=$((i + 1))
        done
        if [ -z "$same" ]; then ok "$name-no-repeats"; else bad "$name-no-repeats" "dumps with the same totals:$same"; fi
    else
        bad "$name" "$n interval dumps, expected at least 3"
    fi
fi
