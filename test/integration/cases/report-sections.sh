# The text report's sections on a real program's profile (test/integration/sections/
# sections_prog.c): its leaking site first by bytes, at the peak and among the leaks, its loop of
# 40-byte blocks freed at once first among the temporary allocations, and each group of blocks
# in its size bucket with the exact count.
# timeout: 120

prog=$BUILD/integration/sections_prog
build "$prog" gcc -O1 -g -fno-omit-frame-pointer test/integration/sections/sections_prog.c || {
    bad report-sections "cannot build sections_prog"
    return 0
}
run sections "" "$prog" || return 0
prof=$(first_profile "$TMP/sections")
if ! "$REPORT" --sections all -o "$TMP/r.txt" "$prof" 2>"$TMP/r.err"; then
    bad report-sections "heapprof-report failed: $(head -c 300 "$TMP/r.err")"
    return 0
fi
# section TITLE: the lines of the section that starts with TITLE, up to its blank line.
section() { sed -n "/^$1/,/^\$/p" "$TMP/r.txt"; }

# expect NAME TITLE PATTERN...: the section's text has each PATTERN (a grep -E pattern).
expect() {
    local name=$1 title=$2 p text
    shift 2
    text=$(section "$title")
    for p in "$@"; do
        if ! grep -qE -- "$p" <<<"$text"; then
            bad "$name" "no '$p' in: $(head -c 400 <<<"$text" | tr '\n' '|')"
            return
        fi
    done
    ok "$name"
}
expect report-sections-bytes "top contexts by bytes allocated" \
    '^  #1  5\.0 MiB \([0-9.]+% of all bytes\) in 5 allocations, context [0-9]+$' \
    '^        size min 1\.0 MiB, avg 1\.0 MiB, max 1\.0 MiB; ' '^        at leak \(.*sections_prog\.c:[0-9]+\)'
expect report-sections-count "top contexts by allocations" \
    '^  #1  1000 allocations \([0-9.]+% of all\), 39\.1 KiB, context' '^        at temporary \('
expect report-sections-peak "top contexts by bytes live at the peak" \
    '^  #1  5\.0 MiB \([0-9.]+% of the peak heap\) in 5 blocks' '^        at leak \('
expect report-sections-leaked "top contexts by leaked bytes" \
    '^  #1  5\.0 MiB \([0-9.]+% of all leaked\) in 5 blocks' '^        at leak \('
expect report-sections-temporary "temporary allocations" \
    '^  #1  1000 allocations .*' \
    '^        size min 40 B, avg 40\.0 B, max 40 B; lifetime min 0 ms, avg 0\.[0-9] ms' \
    '^        at temporary \('
# The held blocks (50 ms) are no temporary ones.
if section "temporary allocations" | grep -q '^        at held '; then
    bad report-sections-not-temporary "held() among the temporary allocations"
else
    ok report-sections-not-temporary
fi
# Size buckets: at least the program's blocks (the C library adds some of its own).
buckets=$(section "allocation sizes")
count_in() { awk -v b="$1" 'index($0, b) == 3 { sub(/^  \[[^)]*\) */, ""); print $1 }' <<<"$buckets"; }
c32=$(count_in "[32 B, 64 B)") c2k=$(count_in "[2 KiB, 4 KiB)") c1m=$(count_in "[1 MiB, 2 MiB)")
if [ "${c32:-0}" -ge 1000 ] && [ "${c2k:-0}" -ge 10 ] && [ "${c1m:-0}" = 5 ]; then
    ok report-sections-sizes
else
    bad report-sections-sizes "[32 B, 64 B) ${c32:-none}, [2 KiB, 4 KiB) ${c2k:-none}, [1 MiB, 2 MiB) ${c1m:-none}: $(tr '\n' '|' <<<"$buckets" | head -c 400)"
fi
# The listing still follows, and --sections contexts prints it alone.
listing='^top [0-9]* of [0-9]* contexts by total_size$'
"$REPORT" --sections contexts -o "$TMP/c.txt" "$prof" 2>/dev/null
if grep -v "$listing" "$TMP/c.txt" | grep -q '^top \|^temporary\|^allocation sizes'; then
    bad report-sections-select "--sections contexts printed another section"
elif grep -q "$listing" "$TMP/r.txt" && grep -q "$listing" "$TMP/c.txt"; then
    ok report-sections-select
else
    bad report-sections-select "no listing after the sections"
fi

# A real program (python3): every allocation with a context is in one size bucket, and the
# first context by bytes is the listing's first (both ordered by total_size).
if run py "" /usr/bin/python3 -c 'x = [str(i) * 3 for i in range(20000)]; print(len(x))'; then
    "$REPORT" -o "$TMP/py.txt" "$(first_profile "$TMP/py")" 2>/dev/null
    total=$(sed -n 's/^  allocations  \([0-9]*\) .*/\1/p' "$TMP/py.txt")
    nocontext=$(sed -n 's/^  contexts .* (\([0-9]*\) allocations* without context.*/\1/p' "$TMP/py.txt")
    inbuckets=$(sed -n '/^allocation sizes/,/^$/p' "$TMP/py.txt" |
        awk '/^  (\[|0 B)/ { sub(/^  (\[[^)]*\)|0 B) */, ""); n += $1 } END { print n + 0 }')
    first=$(sed -n '/^top contexts by bytes allocated/{n;s/.*, context \([0-9]*\)$/\1/p;}' "$TMP/py.txt")
    listed=$(sed -n 's/^#1  context \([0-9]*\):.*/\1/p' "$TMP/py.txt")
    if ! grep -q '^  executable   /usr/bin/python3' "$TMP/py.txt"; then
        bad report-sections-python3 "not python3's profile: $(grep -m1 executable "$TMP/py.txt")"
    elif [ -n "$total" ] && [ "$inbuckets" = $((total - ${nocontext:-0})) ] && [ -n "$first" ] &&
        [ "$first" = "$listed" ]; then
        ok report-sections-python3
    else
        bad report-sections-python3 "allocations $total (${nocontext:-?} without context), in buckets $inbuckets; first by bytes ${first:-none}, listed first ${listed:-none}"
    fi
fi
