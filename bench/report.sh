#!/bin/sh
# Speed of heapprof-report: text (default sections, --top 20; and every context, --top 0) and
# JSON of a python3 profile of about 15k contexts (bench/py_imports.py), against heaptrack_print
# on heaptrack's data of the same run. Wall seconds, best of BENCH_REPS, and output sizes.
# Usage: sh bench/report.sh   (from the repository root, after make; heaptrack optional)
# Results: stdout and build/bench/report/results.txt.
set -u

ROOT=$(pwd)
OUT=$ROOT/build/bench/report
REPORT=$ROOT/build/heapprof-report
REPS=${BENCH_REPS:-3}
PY=/usr/bin/python3
[ -x "$REPORT" ] || { echo "bench/report.sh: run make first" >&2; exit 1; }
rm -rf "$OUT"
mkdir -p "$OUT"

# best CMD...: the best wall time of REPS runs of CMD, in seconds with 3 decimals.
best() {
    b=
    i=0
    while [ $i -lt "$REPS" ]; do
        t0=$(date +%s%N)
        "$@" >/dev/null 2>&1 || { echo "failed: $*" >&2; echo fail; return; }
        t1=$(date +%s%N)
        t=$(((t1 - t0) / 1000000))
        if [ -z "$b" ] || [ $t -lt $b ]; then b=$t; fi
        i=$((i + 1))
    done
    printf '%d.%03d\n' $((b / 1000)) $((b % 1000))
}
size_of() { stat -c %s "$1"; }

env PYTHONMALLOC=malloc PYTHONHASHSEED=0 "$ROOT/scripts/heapprof-run" -q -o "$OUT/py.%p.hpf" \
    "$PY" "$ROOT/bench/py_imports.py" >/dev/null
prof=$(ls "$OUT"/py.*.hpf | head -1)
contexts=$("$REPORT" --sections none "$prof" | sed -n 's/^  contexts *\([0-9]*\).*/\1/p')

{
    echo "heapprof-report on $(basename "$prof"): $(size_of "$prof") bytes, $contexts contexts"
    printf '%-42s %8s %12s\n' "command" "seconds" "output bytes"
    for args in "text|" "text, --top 0|--top 0" "json|-f json"; do
        name=${args%%|*}
        opt=${args#*|}
        # shellcheck disable=SC2086
        s=$(best "$REPORT" $opt -o "$OUT/out" "$prof")
        printf '%-42s %8s %12s\n' "heapprof-report ($name)" "$s" "$(size_of "$OUT/out")"
    done
    if command -v heaptrack >/dev/null && command -v heaptrack_print >/dev/null; then
        env PYTHONMALLOC=malloc PYTHONHASHSEED=0 heaptrack -o "$OUT/ht" "$PY" \
            "$ROOT/bench/py_imports.py" >"$OUT/heaptrack.log" 2>&1
        data=$(ls "$OUT"/ht.zst "$OUT"/ht.gz "$OUT"/ht.*.zst "$OUT"/ht.*.gz 2>/dev/null | head -1)
        if [ -n "$data" ]; then
            s=$(best sh -c 'heaptrack_print "$1" >"$2"' sh "$data" "$OUT/ht.txt")
            echo "heaptrack data $(basename "$data"): $(size_of "$data") bytes"
            printf '%-42s %8s %12s\n' "heaptrack_print (default)" "$s" "$(size_of "$OUT/ht.txt")"
        else
            echo "heaptrack wrote no data (see $OUT/heaptrack.log)"
        fi
    else
        echo "heaptrack not installed: no comparison"
    fi
} | tee "$OUT/results.txt"
