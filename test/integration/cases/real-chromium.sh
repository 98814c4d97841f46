# timeout: 600
# Chromium, when installed: one headless page load (--dump-dom) bare and under the shim gives the
# same page and the same status. Its allocator (PartitionAlloc, linked into the executable) frees
# through a dispatch table the program also calls, so the shim leaves it alone and says so once
# a process; the other processes (the launcher script's helpers) write profiles the report tool
# reads.
name=real-chromium
bin=$(command -v chromium || true)
if [ -z "$bin" ]; then
    skip "$name" "chromium is not installed"
    return 0 2>/dev/null || exit
fi
page=$TMP/page.html
cat >"$page" <<'EOF'
<html><body><p id="x">heap</p><script>
var a = []; for (var i = 0; i < 1000; i++) a.push("s" + i);
document.getElementById("x").textContent += "prof " + a.length;
</script></body></html>
EOF
# chromium_run DIR [PRELOAD]: one page load with HOME and the profile directory in DIR.
chromium_run() {
    rm -rf "$1"
    mkdir -p "$1/home" "$1/prof"
    HOME=$1/home HEAPPROF_OPTIONS="output=$1/prof/p.%p.hpf" LD_PRELOAD=${2:-} timeout -k 10 240 \
        "$bin" --headless --no-sandbox --disable-gpu --no-first-run --user-data-dir="$1/home/ud" \
        --dump-dom "file://$page" >"$1/out" 2>"$1/err"
    echo $? >"$1/status"
}
chromium_run "$TMP/bare"
chromium_run "$TMP/shim" "$SHIM"
bst=$(cat "$TMP/bare/status") sst=$(cat "$TMP/shim/status")
if [ "$bst" -ne 0 ] || ! grep -q "heapprof 1000" "$TMP/bare/out"; then
    skip "$name" "chromium does not load the page bare here (status $bst): $(grep -v dbus "$TMP/bare/err" | head -c 300)"
elif [ "$sst" -ne "$bst" ] || ! cmp -s "$TMP/bare/out" "$TMP/shim/out"; then
    bad "$name" "bare status $bst, shim $sst: $(diff "$TMP/bare/out" "$TMP/shim/out" | head -c 300 | tr '\n' ' ') $(grep heapprof "$TMP/shim/err" | head -c 300)"
else
    ok "$name"
fi
# Each Chromium process says once why its allocator stays unpatched (and no process says more).
notes=$(grep -c '^heapprof: .*not patched (its free dispatches through a table of functions' "$TMP/shim/err")
others=$(grep '^heapprof: ' "$TMP/shim/err" | grep -vc 'not patched (its free dispatches')
if [ "$notes" -lt 1 ] || [ "$others" -ne 0 ]; then
    bad "$name-said" "$notes notes, $others other lines: $(grep '^heapprof: ' "$TMP/shim/err" | head -c 400)"
else
    ok "$name-said"
fi
# Every profile written is complete and readable.
unread=""
for f in "$TMP/shim/prof"/p.*.hpf; do
    [ -f "$f" ] || continue
    "$REPORT" --format json -o "$TMP/r.json" "$f" 2>/dev/null || unread="$unread $(basename "$f")"
done
if [ -n "$unread" ]; then
    bad "$name-profiles" "unreadable:$unread"
else
    ok "$name-profiles"
fi
