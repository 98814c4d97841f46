# A profile cut short (its process killed while it was written) is read up to its last complete
# record: evict's profile (200 contexts of known counts, HIBs evicted to the file's start) cut
# inside the file header and among the evicted HIBs is refused with one line; cut inside a
# record or right after one it is read with one warning line, exit 0, and every context kept
# has exactly its counts; the text and HTML summaries say it was cut (docs/REPORT.md,
# "Profiles cut short").
name=cut-short
if have_prog "$name" "$PBIN/gcc/evict" &&
    run "$name" "hib_table_size=16:hib_table_ways=2:thread_cache_size=16:stack_depth=256" "$PBIN/gcc/evict" "$TMP/evict-own.txt"; then
    prof=$(first_profile "$TMP/$name")
    # The cuts: LABEL OFFSET COMPLETE-RECORDS, from the profile's record layout.
    python3 - "$prof" >"$TMP/cuts" <<'PY'
import struct, sys
d = open(sys.argv[1], "rb").read()
recs, off = [], struct.unpack_from("<I", d, 12)[0]
while off + 16 <= len(d):
    t, _, size = struct.unpack_from("<IIQ", d, off)
    recs.append((t, off, size))
    off += 16 + ((size + 7) & ~7)
first = {}
for i, (t, _, _) in enumerate(recs):
    first.setdefault(t, i)
def at(label, offset):
    print(label, offset, sum(1 for _, o, s in recs if o + 16 + s <= offset and _ != 0x7fff))
at("header", 20)
if first[4] < first[1]:                      # evicted HIBs before PROCESS
    at("spool", recs[first[4]][1] + 40)
p = first[10]                                 # the first PACKED record (LIVE)
at("stack-refs-mid", recs[first[9]][1] + 16 + recs[first[9]][2] // 2)
at("after-live", recs[p + 1][1])              # right after a complete record
at("hib-mid", recs[p + 1][1] + 16 + recs[p + 1][2] // 2)
s = first[6]
at("before-summary", recs[s][1])
at("after-summary", recs[s + 1][1])
at("end-mid", len(d) - 4)
PY
    last=-1 partial=0
    while read -r label off nrec; do
        cname=$name/$label
        head -c "$off" "$prof" >"$TMP/cut.hpf"
        "$REPORT" --format json -o "$TMP/cut.json" "$TMP/cut.hpf" 2>"$TMP/cut.err"
        st=$?
        lines=$(wc -l <"$TMP/cut.err")
        if [ "$label" = header ] || [ "$label" = spool ]; then
            if [ $st -eq 1 ] && [ "$lines" -eq 1 ] && grep -Eq "^heapprof-report: $TMP/cut.hpf: (truncated file header|cut short at byte $off before its PROCESS record)" "$TMP/cut.err"; then
                ok "$cname"
            else
                bad "$cname" "status $st, $lines lines: $(head -c 300 "$TMP/cut.err")"
            fi
            continue
        fi
        want="^heapprof-report: warning: $TMP/cut.hpf: cut short at byte $off \(no END record\): read $nrec complete records, [0-9]+ contexts.*; the process was probably killed while writing it$"
        if [ $st -ne 0 ] || [ "$lines" -ne 1 ] || ! grep -Eq "$want" "$TMP/cut.err"; then
            bad "$cname" "status $st, $lines lines: $(head -c 400 "$TMP/cut.err")"
            continue
        fi
        # Every context kept: rec at depth d allocated 3*d blocks of 10 bytes, all freed.
        if msg=$(python3 - "$TMP/cut.json" "$off" "$last" "$label" <<'PY'
import json, sys
doc = json.load(open(sys.argv[1]))
for c in doc["contexts"]:
    c["frames"] = [doc["frame_table"][i] for i in c["frames"]]
off, last, label = int(sys.argv[2]), int(sys.argv[3]), sys.argv[4]
bad = []
if doc["truncated"] is not True or doc["cut"]["file_size"] != off:
    bad.append(f"truncated {doc['truncated']}, cut {doc['cut']}")
n = 0
for c in doc["contexts"]:
    if not c["frames"] or c["frames"][0]["function"] != "rec":
        continue
    n += 1
    d = sum(1 for f in c["frames"] if f["function"] == "rec")
    if not (c["alloc_count"] == c["allocs"] == 3 * d and c["total_size"] == c["bytes"] == 30 * d):
        bad.append(f"depth {d}: alloc_count {c['alloc_count']}, allocs {c['allocs']}, bytes {c['bytes']}")
if n < last:
    bad.append(f"{n} contexts of rec, fewer than the {last} of a shorter cut")
if label in ("before-summary", "after-summary", "end-mid") and n != 200:
    bad.append(f"{n} contexts of rec, expected 200")
if label in ("after-summary", "end-mid") and doc["cut"]["summary_rebuilt"]:
    bad.append("summary rebuilt though SUMMARY was read")
print(n)
sys.exit("; ".join(bad[:4]) if bad else 0)
PY
        ); then
            ok "$cname"
            last=$msg
            [ "$msg" -gt 0 ] && [ "$msg" -lt 200 ] && partial=1
        else
            bad "$cname" "$msg"
        fi
    done <"$TMP/cuts"
    # Right after the LIVE records, the contexts whose last HIBs the table still held are left
    # out, the others (every HIB already evicted) kept.
    if [ $partial -eq 1 ]; then
        ok "$name/partial"
    else
        bad "$name/partial" "no cut kept some contexts and left out others: $(tr '\n' ' ' <"$TMP/cuts")"
    fi
    # Text and HTML show it in their summaries.
    off=$(awk '$1 == "hib-mid" {print $2}' "$TMP/cuts")
    head -c "$off" "$prof" >"$TMP/cut.hpf"
    if "$REPORT" "$TMP/cut.hpf" 2>/dev/null | grep -q "^  CUT SHORT    at byte $off (no END record): "; then
        ok "$name/text"
    else
        bad "$name/text" "no CUT SHORT line in the text report"
    fi
    CHROMIUM=$(command -v chromium || command -v chromium-browser)
    if [ -z "$CHROMIUM" ]; then
        skip "$name/html" "chromium not installed (Debian package chromium)"
    elif ! "$REPORT" -f html -o "$TMP/cut.html" "$TMP/cut.hpf" 2>/dev/null; then
        bad "$name/html" "heapprof-report -f html failed"
    else
        mkdir -p "$TMP/home"
        HOME=$TMP/home timeout -k 5 120 "$CHROMIUM" --headless --no-sandbox --disable-gpu \
            --user-data-dir="$TMP/chromium" --dump-dom "file://$TMP/cut.html" >"$TMP/cut.dom" 2>/dev/null
        if grep -q "<span id=\"cut-short\">at byte [0-9,]* (no END record)" "$TMP/cut.dom"; then
            ok "$name/html"
        else
            bad "$name/html" "no cut-short row in the page's summary: $(grep -o '<body[^>]*>' "$TMP/cut.dom")"
        fi
    fi
fi
