# jemalloc linked into a program whose main ends in a call that does not return: the linker
# puts jemalloc's constructor right after main, and the look for paths past the entry points
# (backend/reach.c) must not walk on from that call into the constructor (which leads to
# jemalloc's internal frees). The allocator gets headers, quietly, and the numbers are exact.
# timeout: 120
name=linked-noreturn
bin=$PBIN/gcc/noreturn_main
build "$bin" gcc -O2 -g -pthread test/profiling/noreturn_main.c -Wl,-Bstatic -ljemalloc_pic -Wl,-Bdynamic -lm -ldl -lstdc++
# What the case stands on: the constructor follows main, which ends in a call of die.
after_main=$(nm -n "$bin" | awk '$3 == "main" { getline; print $3; exit }')
last_call=$(objdump -d --no-show-raw-insn "$bin" | awk '/^[0-9a-f]+ <main>:/ { m = 1; next } m && /^$/ { exit } m && /call/ { c = $0 } END { print c }')
if [ "$after_main" != jemalloc_constructor ] || ! echo "$last_call" | grep -q '<die'; then
    bad "$name-layout" "main is followed by '$after_main', its last call is '$last_call': the case no longer tests the fall-through"
elif run "$name" "" "$bin"; then
    json=$TMP/$name.json
    if [ "$(cat "$TMP/$name.out")" != done ]; then
        bad "$name" "output: $(head -c 200 "$TMP/$name.out")"
    elif grep -q . "$TMP/$name.err"; then
        bad "$name" "not quiet: $(head -c 300 "$TMP/$name.err")"
    elif ! "$REPORT" --format json -o "$json" "$TMP/$name"/p.*.hpf 2>"$TMP/$name.rep"; then
        bad "$name" "report: $(head -c 200 "$TMP/$name.rep")"
    elif ! msg=$(python3 - "$json" <<'PY' 2>&1
import json, sys
d = json.load(open(sys.argv[1]))
assert d["process"]["backend"] == "patched", d["process"]["backend"]
assert d["summary"]["headerless"] == 0, "profiled without headers"
ones = [c for c in d["contexts"] if c["min_size"] == 1000 and c["max_size"] == 1000]
assert len(ones) == 1 and ones[0]["alloc_count"] == 3 and ones[0]["live_count"] == 0, ones
PY
    ); then
        bad "$name" "$msg"
    else
        ok "$name"
    fi
fi
