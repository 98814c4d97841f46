# timeout: 600
# heapprof-report --format pprof, read by `go tool pprof` (Debian golang-go): test/profiling's
# sites.c (known sites), inlined.c (inlined frames as several lines of one location) and
# sqlite3 under the shim; every sample's values, "bytes" label and frames against the JSON
# report of the same profile (check_export.py over -raw), the default sample type following
# --sort, -top per sample type, -tagfocus on the labels; a terminal refused as output. Skipped
# without the go tool.
CHECK_EXPORT=$ROOT/test/integration/check_export.py
# pprof keeps state in HOME, GOCACHE and PPROF_TMPDIR: all in the case's scratch directory.
export HOME=$TMP/home GOCACHE=$TMP/gocache PPROF_TMPDIR=$TMP/pprof-tmp
mkdir -p "$HOME" "$PPROF_TMPDIR"
# -symbolize=none: the profile comes symbolised; pprof must not look for binaries or servers.
pprof() { go tool pprof -symbolize=none "$@" 2>&1; }

# pprof_checks NAME PROFILE [check_export.py options...] [--sort KEY]: the pprof (in --sort
# KEY's order) and JSON reports of PROFILE, -raw against the JSON; $TMP/NAME.pb.gz stays for
# more checks.
pprof_checks() {
    local name=$1 prof=$2 msg sort=total_size
    shift 2
    if [ "${*: -2:1}" = --sort ]; then
        sort=${*: -1}
        set -- "${@:1:$(($# - 2))}"
    fi
    if [ -z "$prof" ] || ! "$REPORT" --format pprof --sort "$sort" -o "$TMP/$name.pb.gz" "$prof" 2>"$TMP/$name.err" ||
        ! "$REPORT" --format json -o "$TMP/$name.json" "$prof" 2>>"$TMP/$name.err"; then
        bad "$name" "no profile or heapprof-report failed: $(head -c 300 "$TMP/$name.err")"
        return 1
    fi
    if ! gzip -t "$TMP/$name.pb.gz" 2>"$TMP/$name.err"; then
        bad "$name" "not a gzip file: $(head -c 200 "$TMP/$name.err")"
        return 1
    fi
    pprof -raw "$TMP/$name.pb.gz" >"$TMP/$name.raw"
    if msg=$(python3 "$CHECK_EXPORT" pprof "$TMP/$name.raw" "$TMP/$name.json" "$@" 2>&1); then
        ok "$name"
    else
        bad "$name" "$(echo "$msg" | head -5 | tr '\n' ';') (raw: $(head -c 200 "$TMP/$name.raw" | tr '\n' '|'))"
        return 1
    fi
}

# top_has NAME PATTERN ARGS...: `go tool pprof -top ARGS...` prints a line matching PATTERN.
top_has() {
    local name=$1 pattern=$2
    shift 2
    pprof -top "$@" >"$TMP/$name.top"
    if grep -qE -- "$pattern" "$TMP/$name.top"; then
        ok "$name"
    else
        bad "$name" "no line matching '$pattern' in -top $*: $(head -c 400 "$TMP/$name.top" | tr '\n' '|')"
    fi
}

if ! command -v go >/dev/null 2>&1 || ! go tool pprof -h >/dev/null 2>&1; then
    skip report-pprof "go tool pprof not installed (Debian golang-go)"
elif have_shim report-pprof; then
    sites=$PBIN/gcc/sites
    build "$sites" gcc -O2 -g -fno-omit-frame-pointer -pthread -I"$HP_INC" test/profiling/sites.c
    if run pprof-sites "" "$sites"; then
        prof=$(first_profile "$TMP/pprof-sites")
        # sites.c: site_leak 500 x 300 bytes never freed, site_short 1000 x 100 freed, 20 x
        # 1000 bytes memaligned and leaked.
        if pprof_checks pprof-sites "$prof" --default alloc_space \
            --site site_leak=500,150000,500,150000 --site site_short=1000,100000,0,0 \
            --site site_memalign_leak=20,20000,20,20000; then
            pb=$TMP/pprof-sites.pb.gz
            top_has pprof-top-alloc_space '^ +9?[0-9.]+MB .* site_peak$' "$pb"
            top_has pprof-top-inuse_space '^ +146\.48kB .* site_leak$' -sample_index=inuse_space "$pb"
            top_has pprof-top-inuse_objects '^ +500 .* site_leak$' -sample_index=inuse_objects "$pb"
            top_has pprof-top-peak_space '^ +10240kB .* site_peak$' -sample_index=peak_space "$pb"
            # (lifetimes in milliseconds, shown in seconds: site_leak's 500 blocks live ~300 ms each)
            top_has pprof-top-lifetime '^ +1[0-9][0-9](\.[0-9]+)?s .* site_leak$' -sample_index=lifetime "$pb"
            # the "bytes" label: the average block size; 300 bytes is site_leak alone
            top_has pprof-tagfocus-bytes '^Showing nodes accounting for 500, ' -tagfocus=bytes=300B -sample_index=alloc_objects "$pb"
            top_has pprof-tagfocus-range '^Showing nodes accounting for 20, ' -tagfocus=bytes=900B:1000B -sample_index=alloc_objects "$pb"
            if pprof -comments "$pb" | grep -qE '^heapprof profile of pid [0-9]+, written at exit after [0-9]+ ms$'; then
                ok pprof-comments
            else
                bad pprof-comments "$(pprof -comments "$pb" | head -3 | tr '\n' '|')"
            fi
        fi
        # Binary data never goes to a terminal (script(1) gives the tool one): one line, status 2.
        if command -v script >/dev/null 2>&1; then
            out=$(script -qec "$REPORT --format pprof $prof; echo status=\$?" /dev/null </dev/null | tr -d '\r')
            if [ "$out" = "heapprof-report: --format pprof writes binary data: give -o FILE
status=2" ]; then
                ok pprof-tty
            else
                bad pprof-tty "$(echo "$out" | head -c 200 | tr '\n' '|')"
            fi
        else
            skip pprof-tty "script(1) is not installed"
        fi
        # The default sample type follows --sort (the text report's order).
        if "$REPORT" --format pprof --sort live_size -o "$TMP/sites-live.pb.gz" "$prof" &&
            pprof -raw "$TMP/sites-live.pb.gz" | grep -q 'inuse_space/bytes\[dflt\]'; then
            ok pprof-default-follows-sort
        else
            bad pprof-default-follows-sort "--sort live_size did not make inuse_space the default"
        fi
    fi
    # Inlined functions: one location, lines innermost first (check_export.py compares the
    # frames with the JSON's, whose order test/profiling/inlined.sh checks).
    inl=$PBIN/gcc/inlined
    if (mkdir -p "$PBIN/gcc" && cd "$PBIN/gcc" && build inlined gcc -O2 -g "$ROOT/test/profiling/inlined.c"); then
        if run pprof-inlined "" "$inl" && pprof_checks pprof-inlined "$(first_profile "$TMP/pprof-inlined")"; then
            if grep -A2 -E '^ +[0-9]+: 0x[0-9a-f]+ M=[0-9]+ site_inl_leaf ' "$TMP/pprof-inlined.raw" |
                tr '\n' ' ' | grep -qE 'site_inl_leaf .* inl_mid .* site_inl_outer '; then
                ok pprof-inlined-lines
            else
                bad pprof-inlined-lines "no location with site_inl_leaf, inl_mid, site_inl_outer: $(grep -A2 site_inl_leaf "$TMP/pprof-inlined.raw" | head -5 | tr '\n' '|')"
            fi
            # Each function's start_line (-raw's s=) is the line that declares it, inlined or not.
            decl() { grep -n "^[a-z_ ()]*[ *]$1(size_t n)\|^[a-z_ ()]* void $1(void)" test/profiling/inlined.c | head -1 | cut -d: -f1; }
            want="site_inl_leaf [^ ]*:[0-9]+ s=$(decl site_inl_leaf) .*inl_mid [^ ]*:[0-9]+ s=$(decl inl_mid) .*site_inl_outer [^ ]*:[0-9]+ s=$(decl site_inl_outer) "
            if grep -A2 -E '^ +[0-9]+: 0x[0-9a-f]+ M=[0-9]+ site_inl_leaf ' "$TMP/pprof-inlined.raw" |
                tr '\n' ' ' | grep -qE "$want"; then
                ok pprof-start-lines
            else
                bad pprof-start-lines "expected '$want': $(grep -A2 site_inl_leaf "$TMP/pprof-inlined.raw" | head -3 | tr '\n' '|')"
            fi
        fi
    else
        bad pprof-inlined "cannot build test/profiling/inlined.c"
    fi
    # Access data: test/access/patterns.c built by heapprof-cc (gcc mode); site_readheavy's 4
    # blocks take 6464 accesses (test/access/patterns.expected).
    . "$ROOT/test/access/e2e_lib.sh"
    d=$TMP/pprof-patterns
    mkdir -p "$d"
    if ! HEAPPROF_CC=gcc "$HEAPPROF_CC" -O2 -fPIC -c -o "$d/access_lib.o" "$ACCESS_SRC/access_lib.c" 2>"$d/build.err" ||
        ! HEAPPROF_CC=gcc "$HEAPPROF_CC" -shared -o "$d/libaccess_lib.so" "$d/access_lib.o" 2>>"$d/build.err" ||
        ! HEAPPROF_CC=gcc "$HEAPPROF_CC" -O2 -g -o "$d/patterns" "$ACCESS_SRC/patterns.c" -L"$d" \
            -laccess_lib -Wl,-rpath,"$d" 2>>"$d/build.err"; then
        bad pprof-patterns "heapprof-cc: $(head -c 300 "$d/build.err" | tr '\n' '|')"
    elif access_profile pprof-patterns "$d" "$d/patterns" &&
        pprof_checks pprof-patterns "$(ls "$d"/p.*.hpf)" --default accesses --sort total_access_count; then
        top_has pprof-top-accesses '^ +6464 .* site_readheavy$' -sample_index=accesses "$TMP/pprof-patterns.pb.gz"
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
        if run pprof-sqlite3 "" sqlite3 "$TMP/db.sqlite" -init "$TMP/q.sql" .quit; then
            if pprof_checks pprof-sqlite3 "$(first_profile "$TMP/pprof-sqlite3")"; then
                top_has pprof-sqlite3-top '^Showing nodes accounting for [0-9.]+[kMG]?B, ' "$TMP/pprof-sqlite3.pb.gz"
            fi
        fi
    else
        skip pprof-sqlite3 "sqlite3 not installed"
    fi
fi
