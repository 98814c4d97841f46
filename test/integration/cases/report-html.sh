# timeout: 900
# heapprof-report --format html opened in headless Chromium: pages of test/profiling/sites.c,
# python3 and a synthetic profile of 50,000 contexts load without a console message or an
# uncaught exception, the script finishes (body data-ready), the top context's function is in
# the page, and screenshots are kept in the case's directory (test/run.sh -k keeps it) for a
# person to look at.

CHROMIUM=$(command -v chromium || command -v chromium-browser)
mkdir -p "$TMP/home"

# page_load NAME HTML: HTML's DOM after its scripts ran into HTML.dom, Chromium's messages
# into HTML.log, a screenshot into HTML.png. The DOM is that of HTML#selftest, which has the
# page work every control once (report.js, selfTest). False (and a failed check NAME) when the
# page logged anything (it never logs) or threw, or its script or self-test did not finish.
page_load() {
    local pname=$1 html=$2 st
    # HOME and a profile directory of the case's own: Chromium writes into both.
    HOME=$TMP/home timeout -k 5 120 "$CHROMIUM" --headless --no-sandbox --disable-gpu \
        --user-data-dir="$TMP/chromium" --enable-logging=stderr --v=0 \
        --dump-dom "file://$html#selftest" >"$html.dom" 2>"$html.log"
    st=$?
    HOME=$TMP/home timeout -k 5 120 "$CHROMIUM" --headless --no-sandbox --disable-gpu \
        --user-data-dir="$TMP/chromium" --hide-scrollbars --screenshot="$html.png" \
        --window-size=1400,1000 "file://$html" >/dev/null 2>&1
    if [ $st != 0 ]; then
        bad "$pname" "chromium: $(describe $st): $(grep -v dbus "$html.log" | head -c 300)"
    elif grep -q 'CONSOLE' "$html.log"; then
        bad "$pname" "console: $(grep 'CONSOLE' "$html.log" | head -3 | tr '\n' ' ' | head -c 400)"
    elif ! grep -q '<body[^>]* data-ready="1"' "$html.dom" ||
        ! grep -q '<body[^>]* data-selftest="passed [1-9]' "$html.dom"; then
        bad "$pname" "the page's script or self-test did not finish: $(grep -o '<body[^>]*>' "$html.dom")"
    elif [ ! -s "$html.png" ]; then
        bad "$pname" "no screenshot"
    else
        return 0
    fi
    return 1
}

# top_fn_is NAME HTML JSON: the page's top context (by bytes) shows the function JSON's first
# context (sorted by total_size) has, or module+0xOFFSET when it has none.
top_fn_is() {
    local tname=$1 html=$2 json=$3 want got
    want=$(python3 -c '
import json, sys
doc = json.load(open(sys.argv[1]))
c = doc["contexts"][0]
f = doc["frame_table"][c["frames"][0]] if c["frames"] else None
print("[no stack]" if f is None else f["function"] or f["module"].rsplit("/", 1)[-1] + "+0x")
' "$json")
    got=$(grep -o 'id="top-fn">[^<]*' "$html.dom" | head -1 | sed 's/^id="top-fn">//')
    case $got in
    "") bad "$tname" "no top context on the page" ;;
    "$want"*) [ -n "$want" ] && ok "$tname" || bad "$tname" "no first context read from the JSON report" ;;
    *) bad "$tname" "top context shows '$got', the JSON report's first is '$want'" ;;
    esac
}

if [ -z "$CHROMIUM" ]; then
    skip report-html "chromium not installed (Debian package chromium)"
else
    sites=$PBIN/gcc/sites
    name=html-sites
    if have_prog "$name" "$sites" && run "$name" "" "$sites"; then
        prof=$(first_profile "$TMP/$name")
        if ! "$REPORT" -f html -o "$TMP/sites.html" "$prof" 2>"$TMP/sites.err" ||
            ! "$REPORT" -f json -o "$TMP/sites.json" "$prof" 2>>"$TMP/sites.err"; then
            bad "$name" "heapprof-report failed: $(head -c 300 "$TMP/sites.err")"
        elif page_load "$name" "$TMP/sites.html"; then
            ok "$name"
            top_fn_is "$name-top" "$TMP/sites.html" "$TMP/sites.json"
            # the flame graph drew the root, _start .. main and the sites; the table's first
            # page lists the sites; the flame graph's metrics are offered
            miss=""
            frames=$(grep -o '<body[^>]* data-flame-frames="[0-9]*"' "$TMP/sites.html.dom" | sed 's/.*="//;s/"//')
            [ "${frames:-0}" -ge 12 ] || miss=" (a flame graph of ${frames:-no} frames)"
            for s in site_peak site_after_peak site_thread site_leak site_short site_memalign_leak \
                '<option value="inuse_bytes">' '<option value="accesses">' 'id="ctx-count">12 contexts<'; do
                grep -qF "$s" "$TMP/sites.html.dom" || miss="$miss $s"
            done
            if [ -z "$miss" ]; then ok "$name-content"; else bad "$name-content" "not in the page:$miss"; fi
        fi
    fi

    # The chart of several dumps, drawn from data as the writer gives it for three dumps of
    # two processes (the unit test test_html checks the writer's side).
    name=html-chart
    if [ -s "$TMP/sites.html" ]; then
        python3 - "$TMP/sites.html" "$TMP/chart.html" <<'PY'
import re, sys
page = open(sys.argv[1], encoding="utf-8").read()
# pid 11 started 50 ms after pid 10: its dump at 100 ms of its own is at 150 ms on the axis
pts = "[[10,1,100,1000,5,4096,4,90,2000,7000],[10,2,200,3000,9,8192,4,190,3500,7000],[11,1,100,500,2,100,2,100,500,7050]]"
page, n = re.subn(r'"timeline":\[\[[0-9,]*\]\]', '"timeline":' + pts, page)
assert n == 1, "no timeline in the page"
open(sys.argv[2], "w", encoding="utf-8").write(page)
PY
        if page_load "$name" "$TMP/chart.html"; then
            if grep -q '<polyline' "$TMP/chart.html.dom" && grep -q '3 dumps of 2 processes' "$TMP/chart.html.dom" &&
                grep -qF 'pid 11 dump 1 (heapprof_dump()) at 150 ms' "$TMP/chart.html.dom"; then
                ok "$name"
            else
                bad "$name" "no chart: $(grep -o '<div id="timeline">.\{0,200\}' "$TMP/chart.html.dom")"
            fi
        fi
    fi

    # A diff page (figures new minus base, some negative) as the writer gives it for a
    # profile made by --diff (test_html checks the writer's side): the flame graph's widths
    # and colours, the signed table cells and the self-test on such data.
    name=html-diff
    if [ -s "$TMP/sites.html" ]; then
        python3 - "$TMP/sites.html" "$TMP/diff.html" <<'PY'
import json, sys
page = open(sys.argv[1], encoding="utf-8").read()
head, rest = page.split('id="hp-data">', 1)
data, tail = rest.split("</script>", 1)
d = json.loads(data)
d["diff"] = 1
w = len(d["cols"])
for r in range(len(d["ctx"]) // w):
    if r % 2:  # odd rows shrank
        for k in range(2, 10):
            d["ctx"][r * w + k] = -d["ctx"][r * w + k]
data = json.dumps(d, separators=(",", ":")).replace("<", "\\u003c")
open(sys.argv[2], "w", encoding="utf-8").write(head + 'id="hp-data">' + data + "</script>" + tail)
PY
        if page_load "$name" "$TMP/diff.html"; then
            if grep -q 'class="neg">-' "$TMP/diff.html.dom" && grep -q 'class="pos">+' "$TMP/diff.html.dom"; then
                ok "$name"
            else
                bad "$name" "no signed cells in the table"
            fi
        fi
    fi

    # Interval dumps of one run: the chart of the live heap over time has a point per dump.
    name=html-timeline
    if have_prog "$name" "$sites" && run "$name" "dump_interval_ms=50" "$sites"; then
        set -- "$TMP/$name"/p.*.hpf.*
        "$REPORT" -f html -o "$TMP/tl.html" "$(first_profile "$TMP/$name")" "$@" 2>"$TMP/tl.err"
        st=$?
        if [ $st != 0 ]; then
            bad "$name" "heapprof-report: status $st: $(head -c 300 "$TMP/tl.err")"
        elif page_load "$name" "$TMP/tl.html"; then
            if grep -q '<polyline' "$TMP/tl.html.dom" && grep -q "$(($# + 1)) dumps of 1 process" "$TMP/tl.html.dom"; then
                ok "$name"
            else
                bad "$name" "no chart of $(($# + 1)) dumps: $(grep -o '<div id="timeline">.\{0,200\}' "$TMP/tl.html.dom")"
            fi
        fi
    fi

    # An access profile (test/access/patterns.c built by heapprof-cc with gcc's callbacks):
    # the table shows the contexts' access histograms as strips.
    name=html-access
    if [ ! -e "$BUILD/libheapprof_rt.a" ]; then
        bad "$name" "$BUILD/libheapprof_rt.a is missing (make all)"
    elif ! HEAPPROF_CC=gcc "$ROOT/scripts/heapprof-cc" -O2 -g -o "$TMP/patterns" "$ROOT/test/access/patterns.c" \
        "$ROOT/test/access/access_lib.c" 2>"$TMP/acc.err"; then
        bad "$name" "heapprof-cc: $(head -c 300 "$TMP/acc.err")"
    elif ! (cd "$TMP" && timeout -k 5 120 "$ROOT/scripts/heapprof-run" -q -o "$TMP/acc.%p.hpf" ./patterns >/dev/null 2>"$TMP/acc.err"); then
        bad "$name" "heapprof-run: $(head -c 300 "$TMP/acc.err")"
    elif ! "$REPORT" -f html -o "$TMP/acc.html" "$TMP"/acc.*.hpf 2>"$TMP/acc.err"; then
        bad "$name" "heapprof-report failed: $(head -c 300 "$TMP/acc.err")"
    elif page_load "$name" "$TMP/acc.html"; then
        strips=$(grep -o '<canvas class="strip" data-hist=' "$TMP/acc.html.dom" | wc -l)
        if [ "$strips" -ge 3 ] && grep -q 'access profiling</td><td>gcc' "$TMP/acc.html.dom"; then
            ok "$name"
        else
            bad "$name" "$strips histogram strips, access line: $(grep -o 'access profiling</td><td>[^<]*' "$TMP/acc.html.dom")"
        fi
    fi

    # python3: a large real profile, thousands of contexts with deep stacks.
    name=html-python3
    if [ ! -x /usr/bin/python3 ]; then
        skip "$name" "/usr/bin/python3 not installed"
    elif run "$name" "" bash "$ROOT/test/integration/real/python3.sh"; then
        prof=$(ls -S "$TMP/$name"/p.*.hpf | head -1) # python3's, not bash's
        if ! "$REPORT" -f html -o "$TMP/py.html" "$prof" 2>"$TMP/py.err" ||
            ! "$REPORT" -f json -o "$TMP/py.json" "$prof" 2>>"$TMP/py.err"; then
            bad "$name" "heapprof-report failed: $(head -c 300 "$TMP/py.err")"
        elif page_load "$name" "$TMP/py.html"; then
            ok "$name"
            top_fn_is "$name-top" "$TMP/py.html" "$TMP/py.json"
            echo "    python3: $(wc -c <"$TMP/py.html") bytes of page, $(wc -c <"$TMP/py.json") of JSON," \
                "script $(grep -o 'data-render-ms="[0-9]*"' "$TMP/py.html.dom" | tr -dc 0-9) ms"
        fi
    fi

    # 50,000 contexts (report/test/big_profile.h): the page loads and lists them all.
    name=html-50k
    gen=$BUILD/report-cases/gen_big_profile
    if build "$gen" gcc -O1 -std=gnu11 -I"$ROOT/shim" -I"$ROOT/report/test" "$ROOT/report/test/gen_big_profile.c" &&
        "$gen" "$TMP/big.hpf" 50000; then
        if ! "$REPORT" -f html -o "$TMP/big.html" "$TMP/big.hpf" 2>"$TMP/big.err"; then
            bad "$name" "heapprof-report failed: $(head -c 300 "$TMP/big.err")"
        elif page_load "$name" "$TMP/big.html"; then
            if grep -q 'id="ctx-count">50,000 contexts<' "$TMP/big.html.dom"; then
                ok "$name"
            else
                bad "$name" "$(grep -o 'id="ctx-count">[^<]*' "$TMP/big.html.dom")"
            fi
            echo "    50k contexts: $(wc -c <"$TMP/big.html") bytes of page, script" \
                "$(grep -o 'data-render-ms="[0-9]*"' "$TMP/big.html.dom" | tr -dc 0-9) ms"
        fi
    else
        bad "$name" "cannot build or run $gen"
    fi

    # A profile without contexts: every part of the page copes with nothing to show.
    name=html-empty
    if [ -x "$gen" ] && "$gen" "$TMP/empty.hpf" 0 && "$REPORT" -f html -o "$TMP/empty.html" "$TMP/empty.hpf" 2>"$TMP/empty.err"; then
        page_load "$name" "$TMP/empty.html" && ok "$name"
    else
        bad "$name" "no page: $(head -c 300 "$TMP/empty.err" 2>/dev/null)"
    fi
fi
