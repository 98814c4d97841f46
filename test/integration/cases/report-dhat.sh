# timeout: 600
# heapprof-report --format dhat, opened by Valgrind's own viewer code: test/profiling's sites.c,
# test/access/patterns.c built by heapprof-cc (gcc: reads, writes and access histograms) and
# sqlite3 under the shim. The DHAT file's figures against the JSON report of the same profile
# (check_export.py), per-byte accesses of known patterns, then dh_view.js (package valgrind) in
# headless Chromium (test/integration/dh_view.html): the file loads, every sort metric it
# enables displays, no exception or console error, and the top program point's frame is shown.
# Skipped without dh_view.js or Chromium.
CHECK_EXPORT=$ROOT/test/integration/check_export.py
DH_VIEW_JS=/usr/libexec/valgrind/dh_view.js
CHROMIUM=$(command -v chromium || command -v chromium-browser)
export HOME=$TMP/home
mkdir -p "$HOME"

# dhat_checks NAME PROFILE [check_export.py options...]: the DHAT and JSON reports of PROFILE,
# compared; the DHAT file stays as $TMP/NAME.dhat.json.
dhat_checks() {
    local name=$1 prof=$2 msg
    shift 2
    if [ -z "$prof" ] || ! "$REPORT" --format dhat -o "$TMP/$name.dhat.json" "$prof" 2>"$TMP/$name.err" ||
        ! "$REPORT" --format json -o "$TMP/$name.json" "$prof" 2>>"$TMP/$name.err"; then
        bad "$name" "no profile or heapprof-report failed: $(head -c 300 "$TMP/$name.err")"
        return 1
    fi
    if msg=$(python3 "$CHECK_EXPORT" dhat "$TMP/$name.dhat.json" "$TMP/$name.json" "$@" 2>&1); then
        ok "$name"
    else
        bad "$name" "$(echo "$msg" | head -5 | tr '\n' ';')"
        return 1
    fi
}

# dh_view NAME DHATFILE TEXT [all|some]: the viewer loads DHATFILE without an error, displays
# every sort metric it enables (all of them, or only some: those without access figures), and
# its page then shows TEXT.
dh_view() {
    local name=$1 file=$2 text=$3 sorts=${4:-} d=$TMP/$1.view result n m
    if [ ! -f "$DH_VIEW_JS" ] || [ -z "$CHROMIUM" ]; then
        skip "$name" "needs $DH_VIEW_JS (valgrind) and chromium"
        return
    fi
    rm -rf "$d"
    mkdir -p "$d"
    cp "$ROOT/test/integration/dh_view.html" "$d/page.html"
    cp "$DH_VIEW_JS" "$d/dh_view.js"
    python3 "$CHECK_EXPORT" page "$file" "$d"
    # virtual time: the page's timers and the file reader run to their end before the dump
    timeout -k 5 180 "$CHROMIUM" --headless --no-sandbox --disable-gpu --user-data-dir="$d/profile" \
        --virtual-time-budget=60000 --dump-dom "file://$d/page.html" >"$d/dom.html" 2>"$d/chromium.err"
    result=$(sed -n 's/.*<pre id="hp-result">\([^<]*\)<.*/\1/p' "$d/dom.html")
    if [ -z "$result" ]; then
        bad "$name" "the page did not finish: $(tail -c 300 "$d/dom.html" | tr '\n' '|') $(grep -v dbus "$d/chromium.err" | tail -3 | tr '\n' '|')"
    elif [ "${result%% *}" != HP-OK ]; then
        bad "$name" "$(echo "$result" | head -c 500)"
    elif n=${result#*sorts=} m=${n#*/} n=${n%/*} &&
        { [ "$n" -lt 1 ] || { [ "$sorts" = all ] && [ "$n" != "$m" ]; } ||
            { [ "$sorts" = some ] && [ "$n" -ge "$m" ]; }; }; then
        bad "$name" "$result: expected $sorts of the sort metrics"
    elif ! grep -qF -- "$text" "$d/dom.html"; then
        bad "$name" "the viewer does not show '$text'"
    else
        ok "$name"
    fi
}

# top_frame JSON: the first frame of the report's first context (the most bytes), as the DHAT
# file starts it: its address and a colon.
top_frame() {
    python3 -c 'import json, sys; d = json.load(open(sys.argv[1])); print(d["frame_table"][d["contexts"][0]["frames"][0]]["address"] + ":")' "$1"
}

if have_shim report-dhat; then
    # sites.c: lifetimes, maxima, at the peak and at the end; no access data, so the viewer
    # leaves its access metrics out.
    sites=$PBIN/gcc/sites
    build "$sites" gcc -O2 -g -fno-omit-frame-pointer -pthread -I"$HP_INC" test/profiling/sites.c
    if run dhat-sites "" "$sites" && dhat_checks dhat-sites "$(first_profile "$TMP/dhat-sites")"; then
        dh_view dhat-sites-viewer "$TMP/dhat-sites.dhat.json" ": site_peak (sites.c:" some
    fi
    # patterns.c by heapprof-cc (gcc mode): reads and writes apart, histograms of known shape:
    # site_every8 writes each 8-byte word of its 256-byte blocks 10 times (4 blocks: 40 per
    # byte), site_readheavy reads each word of 128 bytes 101 times (404).
    . "$ROOT/test/access/e2e_lib.sh"
    d=$TMP/dhat-patterns
    mkdir -p "$d"
    if ! HEAPPROF_CC=gcc "$HEAPPROF_CC" -O2 -fPIC -c -o "$d/access_lib.o" "$ACCESS_SRC/access_lib.c" 2>"$d/build.err" ||
        ! HEAPPROF_CC=gcc "$HEAPPROF_CC" -shared -o "$d/libaccess_lib.so" "$d/access_lib.o" 2>>"$d/build.err" ||
        ! HEAPPROF_CC=gcc "$HEAPPROF_CC" -O2 -g -o "$d/patterns" "$ACCESS_SRC/patterns.c" -L"$d" \
            -laccess_lib -Wl,-rpath,"$d" 2>>"$d/build.err"; then
        bad dhat-patterns "heapprof-cc: $(head -c 300 "$d/build.err" | tr '\n' '|')"
    elif access_profile dhat-patterns "$d" "$d/patterns" &&
        dhat_checks dhat-patterns "$(ls "$d"/p.*.hpf)" --acc site_every8=40 --acc site_readheavy=404; then
        # with access data every one of the viewer's sort metrics is enabled
        dh_view dhat-patterns-viewer "$TMP/dhat-patterns.dhat.json" "Accesses: {" all
    fi
    # A real program: sqlite3 building, indexing and querying a table.
    if command -v sqlite3 >/dev/null 2>&1; then
        cat >"$TMP/q.sql" <<'SQL'
CREATE TABLE t(id INTEGER PRIMARY KEY, grp INTEGER, name TEXT);
WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c WHERE x < 20000)
INSERT INTO t(grp, name) SELECT x % 37, 'name-' || (x * 7919 % 20011) FROM c;
CREATE INDEX t_grp ON t(grp, name);
SELECT grp, count(*), min(name) FROM t GROUP BY grp ORDER BY grp LIMIT 3;
SQL
        if run dhat-sqlite3 "" sqlite3 "$TMP/db.sqlite" -init "$TMP/q.sql" .quit &&
            dhat_checks dhat-sqlite3 "$(first_profile "$TMP/dhat-sqlite3")"; then
            dh_view dhat-sqlite3-viewer "$TMP/dhat-sqlite3.dhat.json" "$(top_frame "$TMP/dhat-sqlite3.json")"
            # A diff against a run with twice the rows: the growth under its own frame, which
            # the viewer shows like any other.
            sed 's/x < 20000/x < 40000/' "$TMP/q.sql" >"$TMP/q2.sql"
            if run dhat-sqlite3-more "" sqlite3 "$TMP/db2.sqlite" -init "$TMP/q2.sql" .quit; then
                if "$REPORT" --format dhat --diff "$(first_profile "$TMP/dhat-sqlite3")" \
                    -o "$TMP/diff.dhat.json" "$(first_profile "$TMP/dhat-sqlite3-more")" 2>"$TMP/diff.err"; then
                    dh_view dhat-diff-viewer "$TMP/diff.dhat.json" "[grew: new profile minus base]"
                else
                    bad dhat-diff-viewer "heapprof-report --diff: $(head -c 300 "$TMP/diff.err")"
                fi
            fi
        fi
    else
        skip dhat-sqlite3 "sqlite3 not installed"
    fi
fi
