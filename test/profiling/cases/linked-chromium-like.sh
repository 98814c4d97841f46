# An allocator linked into the program whose free traps on a pointer it did not make, as
# Chromium's PartitionAlloc does (test/profiling/chromium_like.c): patched only when no way past
# its entry points is found, in every variant with contiguous segments and with a gap after the
# first one (-z max-page-size=0x200000, as Chromium's). Bare and under the shim: same status,
# same output; forwarded with one line saying why, or patched and profiled exactly.
for layout in contig gap; do
    lflags=""
    [ $layout = gap ] && lflags="-Wl,-z,max-page-size=0x200000"
    for v in internal sized dispatch complete chrome; do
        name=linked-chromium-like-$v-$layout
        case $v in
        internal) defs="" want="calls one of its internal free functions" ;;
        sized) defs="-DSIZED_FREE" want="calls one of its internal free functions" ;;
        dispatch) defs="-DDISPATCH" want="dispatches through a table of functions" ;;
        complete) defs="-DCOMPLETE" want="" ;;
        chrome) defs="-DCOMPLETE -DCHROME_MAIN" want="Chromium's allocator shim" ;;
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
        elif [ -n "$want" ]; then
            # Forwarded: one note, saying why; no profile.
            if [ "$notes" -ne 1 ] || ! grep -q "not patched (.*$want" "$TMP/$name.err" || [ -n "$(ls "$TMP/$name")" ]; then
                bad "$name" "notes $notes, profiles: $(ls "$TMP/$name" | tr '\n' ' '); stderr: $(head -c 300 "$TMP/$name.err")"
            else
                ok "$name"
            fi
        elif [ "$notes" -ne 0 ]; then
            bad "$name" "patched, yet it says: $(head -c 300 "$TMP/$name.err")"
        elif ! "$REPORT" --format json -o "$TMP/$name.json" "$(first_profile "$TMP/$name")" 2>"$TMP/$name.rerr"; then
            bad "$name" "no readable profile: $(head -c 300 "$TMP/$name.rerr")"
        elif msg=$(python3 - "$TMP/$name.json" <<'EOF'
import json, sys
doc = json.load(open(sys.argv[1]))
main = [c for c in doc["contexts"] if c["frames"] and c["frames"][0]["function"] == "main"]
got = [(c["alloc_count"], c["total_size"], c["live_count"]) for c in main]
if got != [(100, 10000, 0)]:
    sys.exit("main's contexts (allocations, bytes, live): %s, expected [(100, 10000, 0)]" % got)
EOF
        ); then
            ok "$name"
        else
            bad "$name" "$msg"
        fi
    done
done
