# timeout: 600
# heapprof-report --format folded on real profiles: test/profiling/sites.c (known sites: every
# line's value per metric, frames outermost first) and sqlite3 (the lines add up to the JSON's
# figures). The lines are read as flamegraph.pl and speedscope read them (no tool of theirs is
# packaged in Debian): the value after the last blank, frames split at ';'.

# folded_read FILE: checks every line's shape; prints "STACK<TAB>VALUE" per line.
folded_read() {
    python3 - "$1" <<'PY'
import re, sys
for n, line in enumerate(open(sys.argv[1], encoding="utf-8"), 1):
    line = line.rstrip("\n")
    m = re.match(r"^(.*\S)\s+?(\d+)$", line)  # flamegraph.pl's pattern (integer counts)
    if not m:
        sys.exit("line %d has no count: %r" % (n, line[:200]))
    frames = m.group(1).split(";")
    if any(f == "" for f in frames):
        sys.exit("line %d has an empty frame: %r" % (n, line[:200]))
    print("%s\t%s" % (m.group(1), m.group(2)))
PY
}

# folded_has NAME FILE SUFFIX VALUE...: each "SUFFIX VALUE" pair (a stack's innermost frames and
# its value) is one line of FILE; pairs with VALUE "-" must have no line.
folded_has() {
    local fname=$1 file=$2 miss="" suffix want got
    shift 2
    if ! folded_read "$file" >"$file.tsv" 2>"$file.err"; then
        bad "$fname" "$(head -c 300 "$file.err")"
        return
    fi
    while [ $# -ge 2 ]; do
        suffix=$1 want=$2
        shift 2
        got=$(awk -F'\t' -v s="$suffix" 'length($1) >= length(s) && substr($1, length($1) - length(s) + 1) == s { print $2 }' "$file.tsv")
        if [ "$want" = - ]; then
            [ -z "$got" ] || miss="$miss $suffix: $got, expected no line;"
        elif [ "$got" != "$want" ]; then
            miss="$miss $suffix: '${got//$'\n'/,}' expected $want;"
        fi
    done
    if [ -z "$miss" ]; then ok "$fname"; else bad "$fname" "$miss"; fi
}

sites=$PBIN/gcc/sites
name=folded-sites
if have_prog "$name" "$sites" && run "$name" "" "$sites"; then
    prof=$(first_profile "$TMP/$name")
    for m in bytes count leaked peak; do
        "$REPORT" --format folded --metric $m -o "$TMP/$m.folded" "$prof" 2>"$TMP/$m.err" ||
            bad "$name-$m" "heapprof-report failed: $(head -c 300 "$TMP/$m.err")"
    done
    # sites.c's numbers (test/profiling/check_sites.py has the same ones)
    folded_has "$name-bytes" "$TMP/bytes.folded" \
        "main;site_short" 100000 "main;site_leak" 150000 "main;site_long_alloc" 40960 \
        "main;site_aligned" 25600 "main;site_memalign_leak" 20000 "main;site_realloc" 8176 \
        "thread_main;site_thread" 192000 "main;site_peak" 10485760 "main;site_after_peak" 5242880
    folded_has "$name-count" "$TMP/count.folded" \
        "main;site_short" 1000 "main;site_leak" 500 "main;site_aligned" 100 \
        "main;site_realloc" 9 "thread_main;site_thread" 4000 "main;site_peak" 10
    folded_has "$name-leaked" "$TMP/leaked.folded" \
        "main;site_leak" 150000 "main;site_memalign_leak" 20000 "main;site_short" - "main;site_peak" -
    folded_has "$name-peak" "$TMP/peak.folded" "main;site_peak" 10485760 "main;site_short" -
    # outermost first: the process's entry, then main, then the site
    if grep -q '^_start;.*;main;site_leak 150000$' "$TMP/bytes.folded" ||
        grep -q '^__libc_start_main[^;]*;.*main;site_leak 150000$' "$TMP/bytes.folded"; then
        ok "$name-order"
    else
        bad "$name-order" "$(grep site_leak "$TMP/bytes.folded" | head -c 300)"
    fi
    # The renderers themselves where one is installed (none is packaged in Debian).
    for tool in flamegraph.pl inferno-flamegraph; do
        if ! command -v $tool >/dev/null; then
            skip "$name-$tool" "$tool not installed"
        elif $tool "$TMP/bytes.folded" >"$TMP/$tool.svg" 2>"$TMP/$tool.err" && grep -q 'site_peak' "$TMP/$tool.svg"; then
            ok "$name-$tool"
        else
            bad "$name-$tool" "no SVG with site_peak: $(head -c 300 "$TMP/$tool.err")"
        fi
    done
    "$REPORT" --format folded --metric nonsense "$prof" >/dev/null 2>"$TMP/bad.err"
    st=$?
    if [ $st = 2 ] && grep -qx "heapprof-report: unknown metric 'nonsense' (try --help)" "$TMP/bad.err"; then
        ok "$name-bad-metric"
    else
        bad "$name-bad-metric" "status $st: $(head -c 200 "$TMP/bad.err")"
    fi
fi

# sqlite3 (a program with symbols only for its API): the lines add up to the contexts' bytes and
# allocation counts in the JSON report, each stack once.
name=folded-sqlite3
if ! command -v sqlite3 >/dev/null; then
    skip "$name" "sqlite3 not installed"
elif have_shim "$name"; then
    run_in "$TMP/sq" "$SHIM" $REAL_TIMEOUT bash "$ROOT/test/integration/real/sqlite3.sh"
    prof=$(ls "$TMP"/sq/prof/*.hpf 2>/dev/null | xargs -r ls -S | head -1) # sqlite3's, not bash's
    if [ "$(cat "$TMP/sq/st")" != 0 ] || [ -z "$prof" ]; then
        bad "$name" "run failed: $(describe "$(cat "$TMP/sq/st")"): $(excerpt "$TMP/sq/err")"
    elif ! "$REPORT" -f folded -o "$TMP/sq.bytes" "$prof" 2>"$TMP/sq.err" ||
        ! "$REPORT" -f folded -M count -o "$TMP/sq.count" "$prof" 2>>"$TMP/sq.err" ||
        ! "$REPORT" -f json -o "$TMP/sq.json" "$prof" 2>>"$TMP/sq.err"; then
        bad "$name" "heapprof-report failed: $(head -c 300 "$TMP/sq.err")"
    elif ! folded_read "$TMP/sq.bytes" >"$TMP/sq.bytes.tsv" 2>"$TMP/sq.rerr" ||
        ! folded_read "$TMP/sq.count" >"$TMP/sq.count.tsv" 2>>"$TMP/sq.rerr"; then
        bad "$name" "$(head -c 300 "$TMP/sq.rerr")"
    elif msg=$(python3 - "$TMP/sq.json" "$TMP/sq.bytes.tsv" "$TMP/sq.count.tsv" <<'PY'
import json, sys
j = json.load(open(sys.argv[1]))
ctx = j["contexts"]
# the metric's figure: the LIVE record's when the context has one, else the HIB's
want_b = sum(c["bytes"] if c["allocs"] else c["total_size"] for c in ctx)
want_n = sum(c["allocs"] if c["allocs"] else c["alloc_count"] for c in ctx)
def read(path):
    rows = [l.rstrip("\n").rsplit("\t", 1) for l in open(path, encoding="utf-8")]
    stacks = [r[0] for r in rows]
    if len(stacks) != len(set(stacks)):
        sys.exit("%s: a stack on more than one line" % path)
    return sum(int(r[1]) for r in rows), len(rows)
got_b, nb = read(sys.argv[2])
got_n, nn = read(sys.argv[3])
if got_b != want_b or got_n != want_n:
    sys.exit("folded sums %d bytes / %d allocations, JSON contexts %d / %d" % (got_b, got_n, want_b, want_n))
if nb < 20:
    sys.exit("only %d stacks" % nb)
if not any("sqlite3" in l for l in open(sys.argv[2], encoding="utf-8")):
    sys.exit("no frame of sqlite3 or libsqlite3")
print("%d stacks, %d bytes" % (nb, got_b))
PY
    ); then
        ok "$name"
        echo "    $msg"
    else
        bad "$name" "$msg"
    fi
fi
