# timeout: 600
# Chromium, when installed: one headless page load (--dump-dom) bare and under the shim gives the
# same page and the same status. Its allocator (PartitionAlloc, linked into the executable) frees
# through a dispatch table the program also calls, so the shim profiles it without headers and
# says so once a process. Every process that exits (not one its browser kills with SIGTERM at the
# end, seen with strace) writes a profile the report tool reads; the browser's is marked
# headerless and holds its allocations.
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
# chromium_run DIR [PRELOAD]: one page load with HOME and the profile directory in DIR; with a
# preload, under strace when there is one (how each process ended, in DIR/strace).
chromium_run() {
    rm -rf "$1"
    mkdir -p "$1/home" "$1/prof"
    local trace=""
    [ -n "${2:-}" ] && command -v strace >/dev/null && trace="strace -f -qq -e trace=none -o $1/strace"
    # shellcheck disable=SC2086
    HOME=$1/home HEAPPROF_OPTIONS="output=$1/prof/p.%p.hpf" timeout -k 10 240 $trace \
        env LD_PRELOAD=${2:-} "$bin" --headless --no-sandbox --disable-gpu --no-first-run --user-data-dir="$1/home/ud" \
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
# Each Chromium process says once why its allocator is profiled without headers (and no process
# says more).
why='cannot be patched completely (its free dispatches through a table of functions.*profiled without headers'
notes=$(grep -c "^heapprof: .*$why" "$TMP/shim/err")
others=$(grep '^heapprof: ' "$TMP/shim/err" | grep -vc "$why")
if [ "$notes" -lt 1 ] || [ "$others" -ne 0 ]; then
    bad "$name-said" "$notes notes, $others other lines: $(grep '^heapprof: ' "$TMP/shim/err" | head -c 400)"
else
    ok "$name-said"
fi
# Every profile is read: complete, or cut short with one warning line (a process killed, or
# ended by a raw exit_group from another thread, while its exit profile was written) and read
# up to the cut. Those of the chromium executable without --type (the browser; a helper it
# forks) are marked headerless, and one has the browser's allocations. A profile may be refused
# only when it was cut before anything usable (its PROCESS record): the process was seen killed
# or sent SIGTERM by the browser at its end (Chromium's handler then ends the process from
# whichever thread), or it is a child's, and a minority of the children; the first process's
# profile never is.
unread="" browser="" root="" children=0 early=0
[ -f "$TMP/shim/strace" ] && root=$(head -1 "$TMP/shim/strace" | cut -d' ' -f1)
for f in "$TMP/shim/prof"/p.*.hpf; do
    [ -f "$f" ] || continue
    pid=${f##*/p.}
    pid=${pid%.hpf}
    [ "$pid" != "$root" ] && children=$((children + 1))
    if ! "$REPORT" --format json -o "$TMP/r.json" "$f" 2>"$TMP/r.err"; then
        if ! grep -Eq "^heapprof-report: $f: (cut short at byte [0-9]+ before its PROCESS record|empty file)" "$TMP/r.err"; then
            unread="$unread $(basename "$f"): $(head -c 200 "$TMP/r.err")"
        elif [ -f "$TMP/shim/strace" ] && grep -qE "^$pid (\+\+\+ killed by SIG|--- SIGTERM )" "$TMP/shim/strace"; then
            :
        elif [ -n "$root" ] && [ "$pid" != "$root" ]; then
            early=$((early + 1))
        else
            unread="$unread $(basename "$f"): $(head -c 200 "$TMP/r.err")"
        fi
        continue
    fi
    # One cut short says so in its warning and in its JSON.
    if grep -q "^heapprof-report: warning: $f: cut short at byte" "$TMP/r.err" &&
        ! grep -q '"truncated": true' "$TMP/r.json"; then
        unread="$unread $(basename "$f"): cut short, but its JSON does not say so"
    fi
    browser=$browser$(python3 - "$TMP/r.json" <<'EOF'
import json, sys
doc = json.load(open(sys.argv[1]))
argv, s = doc["process"]["command_line"], doc["summary"]
# cut before its SUMMARY: the shim's counters (headerless among them) are not known
if doc["cut"] and doc["cut"]["summary_rebuilt"]:
    sys.exit(0)
if argv and argv[0].endswith("/chromium") and not any(a.startswith("--type=") for a in argv):
    print("headerless=%d allocs=%d " % (s["headerless"], s["total_allocs"]), end="")
EOF
)
done
if [ $((early * 2)) -gt "$children" ]; then
    unread="$unread $early of $children child profiles cut short before anything usable"
fi
if [ -n "$unread" ]; then
    bad "$name-profiles" "unreadable:$unread"
elif ! echo "$browser" | grep -Eq 'headerless=1 allocs=[0-9]{4,} ' || echo "$browser" | grep -q 'headerless=0'; then
    bad "$name-profiles" "chromium's own profiles: '$browser' (want headerless=1, and the browser's allocations)"
else
    ok "$name-profiles"
fi
