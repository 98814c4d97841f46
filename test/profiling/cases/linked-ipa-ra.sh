# Callers of the program's own allocator that keep values in registers across their calls of it,
# as gcc's -fipa-ra lets them when the allocator is in the same file: general registers
# (test/profiling/ipa_ra.c) and SSE registers only (ipa_ra.c -DXMM). The shim patches the allocator
# (for blocks without headers: it is the program's own) and its way in keeps every register
# (backend/keep_regs.c): bare and under the shim, same status, same output, and (-DXMM)
# a profile with main's 100 allocations. Built with -fno-ipa-ra as well.
for prog in ipa_ra ipa_ra_xmm; do
    defs=""
    [ $prog = ipa_ra_xmm ] && defs="-DXMM"
    for v in ipa-ra no-ipa-ra; do
        name=linked-$v${prog#ipa_ra}
        extra=""
        [ $v = no-ipa-ra ] && extra="-fno-ipa-ra"
        bin=$PBIN/gcc/$prog-$v
        # shellcheck disable=SC2086
        if ! build "$bin" gcc -O2 -g $extra $defs test/profiling/ipa_ra.c; then
            bad "$name" "cannot build ipa_ra.c $extra $defs"
            continue
        fi
        "$bin" >"$TMP/$name.bare" 2>&1
        bst=$?
        rm -rf "$TMP/$name"
        run_status "$name" "" "$bin"
        prof=$(ls "$TMP/$name"/p.*.hpf 2>/dev/null | head -1)
        if [ $bst -ne 0 ] || [ $st -ne $bst ] || ! cmp -s "$TMP/$name.bare" "$TMP/$name.out"; then
            bad "$name" "bare status $bst, shim $st: $(cat "$TMP/$name.out" "$TMP/$name.err" | head -c 300 | tr '\n' ' ')"
        elif grep -q "not patched" "$TMP/$name.err"; then
            bad "$name" "not patched: $(head -c 300 "$TMP/$name.err")"
        elif [ $prog = ipa_ra ]; then
            ok "$name" # its main allocates inline: no allocation of its through malloc to look for
        elif [ -z "$prof" ] || ! "$REPORT" --format json "$prof" >"$TMP/$name.json" 2>"$TMP/$name.rerr"; then
            bad "$name" "no profile: $(head -c 300 "$TMP/$name.rerr" 2>/dev/null)"
        elif ! python3 - "$TMP/$name.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
ft = d.get("frame_table") or []
def top(c):
    f = c["frames"][0]
    return (ft[f] if isinstance(f, int) else f)["function"]
main = [c for c in d["contexts"] if c["frames"] and top(c) == "main" and c["alloc_count"] == 100]
sys.exit(0 if main and d["summary"]["headerless"] == 1 else 1)
PY
        then
            bad "$name" "main's 100 allocations not in the profile, or not headerless"
        else
            ok "$name"
        fi
    done
done
