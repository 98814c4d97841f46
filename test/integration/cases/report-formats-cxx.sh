# timeout: 900
# Every output format on one real C++ program's profile: clang++ (libLLVM and libclang-cpp,
# C++ with new/delete and demangled names from the libraries' symbol tables) compiling a small
# C++ file under the shim. pprof read by `go tool pprof` and compared sample by sample with the
# JSON (check_export.py); DHAT's file against the JSON; folded lines adding up to the JSON's
# bytes; the HTML page loading in headless Chromium without a console message; memprof written
# for a non-PIE clang (Debian's) and refused in one line for a PIE one. The other report-* cases
# do the same on test programs, sqlite3 and python3; this one is the C++ program.
CHECK_EXPORT=$ROOT/test/integration/check_export.py
CHROMIUM=$(command -v chromium || command -v chromium-browser)
export HOME=$TMP/home GOCACHE=$TMP/gocache PPROF_TMPDIR=$TMP/pprof-tmp
mkdir -p "$HOME" "$PPROF_TMPDIR"
CXX_PROG=$(command -v clang++ || true)

if [ -z "$CXX_PROG" ]; then
    skip report-formats-cxx "clang++ not installed"
elif have_shim report-formats-cxx; then
    cat >"$TMP/unit.cc" <<'CC'
#include <map>
#include <string>
#include <vector>
template <typename T> struct Box { std::vector<T> v; std::map<std::string, T> m; };
int main() { Box<int> b; b.v.push_back(1); b.m["x"] = 2; return b.v[0] + b.m["x"] - 3; }
CC
    name=cxx
    if run "$name" "" "$CXX_PROG" -fsyntax-only "$TMP/unit.cc"; then
        prof=$(first_profile "$TMP/$name")
        if [ -z "$prof" ] || ! "$REPORT" --format json -o "$TMP/cxx.json" "$prof" 2>"$TMP/cxx.rerr"; then
            bad cxx-json "no profile or no JSON report: $(head -c 300 "$TMP/cxx.rerr")"
        elif python3 - "$TMP/cxx.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
names = [f["function"] for f in d["frame_table"]]
# a C++ program: contexts by the thousand, names demangled (clang::, llvm::)
sys.exit(0 if len(d["contexts"]) > 200 and any(n.startswith(("clang::", "llvm::")) for n in names) else 1)
PY
        then
            ok cxx-json
        else
            bad cxx-json "fewer than 200 contexts or no demangled clang:: / llvm:: frame"
        fi
        # pprof, read by go tool pprof, sample by sample against the JSON
        if ! command -v go >/dev/null 2>&1; then
            skip cxx-pprof "go tool pprof not installed (Debian golang-go)"
        elif ! "$REPORT" --format pprof -o "$TMP/cxx.pb.gz" "$prof" 2>"$TMP/cxx.perr"; then
            bad cxx-pprof "$(head -c 300 "$TMP/cxx.perr")"
        else
            go tool pprof -symbolize=none -raw "$TMP/cxx.pb.gz" >"$TMP/cxx.raw" 2>&1
            if msg=$(python3 "$CHECK_EXPORT" pprof "$TMP/cxx.raw" "$TMP/cxx.json" 2>&1); then
                ok cxx-pprof
            else
                bad cxx-pprof "$(echo "$msg" | head -5 | tr '\n' ';')"
            fi
        fi
        # DHAT's file against the JSON
        if ! "$REPORT" --format dhat -o "$TMP/cxx.dhat.json" "$prof" 2>"$TMP/cxx.derr"; then
            bad cxx-dhat "$(head -c 300 "$TMP/cxx.derr")"
        elif msg=$(python3 "$CHECK_EXPORT" dhat "$TMP/cxx.dhat.json" "$TMP/cxx.json" 2>&1); then
            ok cxx-dhat
        else
            bad cxx-dhat "$(echo "$msg" | head -5 | tr '\n' ';')"
        fi
        # folded: the lines' values add up to the JSON's bytes (contexts with a stack)
        if ! "$REPORT" --format folded -o "$TMP/cxx.folded" "$prof" 2>"$TMP/cxx.ferr"; then
            bad cxx-folded "$(head -c 300 "$TMP/cxx.ferr")"
        else
            sum=$(awk '{s += $NF} END {print s + 0}' "$TMP/cxx.folded")
            want=$(python3 -c 'import json, sys; d = json.load(open(sys.argv[1])); print(sum(c["bytes"] for c in d["contexts"] if c["frames"]))' "$TMP/cxx.json")
            if [ "$sum" = "$want" ] && [ "$sum" -gt 0 ]; then
                ok cxx-folded
            else
                bad cxx-folded "folded lines add up to $sum bytes, the JSON's contexts to $want"
            fi
        fi
        # html in headless Chromium: the page's script and self-test finish, no console message
        if [ -z "$CHROMIUM" ]; then
            skip cxx-html "chromium not installed"
        elif ! "$REPORT" --format html -o "$TMP/cxx.html" "$prof" 2>"$TMP/cxx.herr"; then
            bad cxx-html "$(head -c 300 "$TMP/cxx.herr")"
        else
            timeout -k 5 180 "$CHROMIUM" --headless --no-sandbox --disable-gpu \
                --user-data-dir="$TMP/chromium" --enable-logging=stderr --v=0 \
                --dump-dom "file://$TMP/cxx.html#selftest" >"$TMP/cxx.dom" 2>"$TMP/cxx.clog"
            st=$?
            if [ $st != 0 ]; then
                bad cxx-html "chromium: $(describe $st)"
            elif grep -q CONSOLE "$TMP/cxx.clog"; then
                bad cxx-html "console: $(grep CONSOLE "$TMP/cxx.clog" | head -2 | tr '\n' ' ' | head -c 300)"
            elif ! grep -q '<body[^>]* data-selftest="passed [1-9]' "$TMP/cxx.dom"; then
                bad cxx-html "the page's self-test did not pass: $(grep -o '<body[^>]*>' "$TMP/cxx.dom" | head -c 300)"
            else
                ok cxx-html
            fi
        fi
        # memprof: llvm-profdata 16 reads only non-PIE executables. Debian's clang is one (then
        # a raw profile with LLVM's magic is written; clang has no debug information, which
        # llvm-profdata would need to map its frames, so the round trip is report-memprof's);
        # a PIE one is refused in one line.
        "$REPORT" --format memprof -o "$TMP/cxx.memprofraw" "$prof" 2>"$TMP/cxx.merr"
        st=$?
        etype=$(od -A n -t u2 -j 16 -N 2 "$(readlink -f "$CXX_PROG")" | tr -d ' ')
        if [ "$etype" = 2 ]; then
            magic=$(od -A n -t x1 -N 8 "$TMP/cxx.memprofraw" 2>/dev/null | tr -d ' \n')
            if [ $st = 0 ] && [ "$magic" = 8172666f72706dff ] && [ ! -s "$TMP/cxx.merr" ]; then
                ok cxx-memprof
            else
                bad cxx-memprof "status $st, magic '$magic': $(head -c 300 "$TMP/cxx.merr")"
            fi
        elif [ $st = 1 ] && [ "$(wc -l <"$TMP/cxx.merr")" = 1 ] &&
            grep -q '^heapprof-report: .*position-independent' "$TMP/cxx.merr"; then
            ok cxx-memprof-refused
        else
            bad cxx-memprof-refused "status $st: $(head -c 300 "$TMP/cxx.merr")"
        fi
    fi
fi
