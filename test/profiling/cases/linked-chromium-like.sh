# An allocator linked into the program whose free traps on a pointer it did not make, as
# Chromium's PartitionAlloc does (test/profiling/chromium_like.c): not a known family, so always
# profiled without headers (its own pointers, kept by address); a note on stderr when a way past
# its entry points is found, none otherwise; in every variant with contiguous segments and with a gap after the first one
# (-z max-page-size=0x200000, as Chromium's). Bare and under the shim: same status, same output;
# exact allocation counts at main's sites (realloc's too), frees through free() seen, frees past
# it seen at the reuse of their address (99 "freed unseen", the last block still live); with
# headerless=0, forwarded with one line saying why and no profile.
for layout in contig gap; do
    lflags=""
    [ $layout = gap ] && lflags="-Wl,-z,max-page-size=0x200000"
    for v in internal sized dispatch complete; do
        name=linked-chromium-like-$v-$layout
        case $v in
        internal) defs="" want="calls one of its internal free functions" ;;
        sized) defs="-DSIZED_FREE" want="calls one of its internal free functions" ;;
        dispatch) defs="-DDISPATCH" want="dispatches through a table of functions" ;;
        complete) defs="-DCOMPLETE" want="" ;;
        esac
        bin=$PBIN/gcc/chromium_like-$v-$layout
        # shellcheck disable=SC2086
        if ! build "$bin" gcc -O1 -g -rdynamic $defs $lflags test/profiling/chromium_like.c; then
            bad "$name" "cannot build chromium_like.c $defs $lflags"
            continue
        fi
        if [ $layout = gap ] && ! readelf -lW "$bin" | awk '$1 == "LOAD" { print $3, $6 }' |
            python3 -c 'import sys; s=[(int(a,16),int(b,16)) for a,b in (l.split() for l in sys.stdin)]; sys.exit(0 if any(x[0]+x[1] < y[0] - 4096 for x,y in zip(s,s[1:])) else 1)'; then
            bad "$name" "its segments are contiguous: the layout under test is not there"
            continue
        fi
        "$bin" >"$TMP/$name.bare" 2>&1
        bst=$?
        run_status "$name" "" "$bin"
        notes=$(grep -c '^heapprof: ' "$TMP/$name.err")
        if [ $bst -ne 0 ] || [ $st -ne $bst ] || ! cmp -s "$TMP/$name.bare" "$TMP/$name.out"; then
            bad "$name" "bare status $bst, shim $st: $(head -c 300 "$TMP/$name.err" | tr '\n' ' ')"
            continue
        fi
        if [ -n "$want" ]; then
            # Headerless: one note, saying why not every path is patched.
            if [ "$notes" -ne 1 ] || ! grep -q "cannot be patched completely (.*$want.*profiled without headers" "$TMP/$name.err"; then
                bad "$name" "notes $notes: $(head -c 300 "$TMP/$name.err")"
                continue
            fi
        elif [ "$notes" -ne 0 ]; then
            bad "$name" "nothing found past its entry points, yet it says: $(head -c 300 "$TMP/$name.err")"
            continue
        fi
        if ! "$REPORT" --format json -o "$TMP/$name.json" "$(first_profile "$TMP/$name")" 2>"$TMP/$name.rerr"; then
            bad "$name" "no readable profile: $(head -c 300 "$TMP/$name.rerr")"
        elif msg=$(python3 - "$TMP/$name.json" "$v" <<'EOF'
import json, sys
doc = json.load(open(sys.argv[1]))
v = sys.argv[2]
ft = doc.get("frame_table") or []
def top(c):
    f = c["frames"][0]
    return (ft[f] if isinstance(f, int) else f)["function"]
main = sorted(((c["alloc_count"], c["total_size"], c["live_count"])
               for c in doc["contexts"] if c["frames"] and top(c) == "main"), reverse=True)
past = v in ("internal", "sized", "dispatch")  # frees past free(): seen at the reuse
want = [(100, 10000, 1 if past else 0), (20, 4000, 0), (1, 300, 0), (1, 70, 0), (1, 50, 0)]
if main != want:
    sys.exit("main's contexts (allocations, bytes, live): %s, expected %s" % (main, want))
s = doc["summary"]
hl = 1
if s.get("headerless") != hl or s.get("headerless_unseen_frees") != (99 if past else 0):
    sys.exit("summary headerless %s, unseen frees %s; expected %d, %d"
             % (s.get("headerless"), s.get("headerless_unseen_frees"), hl, 99 if past else 0))
EOF
        ); then
            ok "$name"
        else
            bad "$name" "$msg"
        fi
    done
done
# headerless=0: such an allocator is only forwarded to, with one line saying why, and no profile.
name=linked-chromium-like-noheaderless
bin=$PBIN/gcc/chromium_like-dispatch-gap
if [ -x "$bin" ]; then
    "$bin" >"$TMP/$name.bare" 2>&1
    bst=$?
    run_status "$name" "headerless=0" "$bin"
    notes=$(grep -c '^heapprof: ' "$TMP/$name.err")
    if [ $st -ne $bst ] || ! cmp -s "$TMP/$name.bare" "$TMP/$name.out"; then
        bad "$name" "bare status $bst, shim $st: $(head -c 300 "$TMP/$name.err" | tr '\n' ' ')"
    elif [ "$notes" -ne 1 ] || ! grep -q "not patched (its free dispatches through a table" "$TMP/$name.err" || [ -n "$(ls "$TMP/$name")" ]; then
        bad "$name" "notes $notes, profiles: $(ls "$TMP/$name" | tr '\n' ' '); stderr: $(head -c 300 "$TMP/$name.err")"
    else
        ok "$name"
    fi
else
    bad "$name" "no $bin"
fi
