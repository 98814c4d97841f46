# heapprof-report on several profiles of real runs (test/profiling/merge_diff.c): a numbered dump
# is superseded by its process's exit profile, different runs and a parent and its forked child
# add up by stack, and --diff shows each site's growth and shrinkage exactly, in JSON and text.
# python3 and a python3 child it starts (other addresses: ASLR): merged, every symbolised stack
# allocates what it did in the two profiles; a profile diffed with itself shows no change. Two
# non-PIE programs at one address, merged: each stack as in its own profile.
build "$PBIN/gcc/merge_diff" gcc -O0 -g -fno-omit-frame-pointer test/profiling/merge_diff.c
MD=$PBIN/gcc/merge_diff
CHECK_MD=$ROOT/test/integration/check_merge_diff.py

# md_check NAME KIND REPORT-ARGS... -- SINGLE-PROFILES...: the report's JSON passes KIND;
# SINGLE-PROFILES are reported alone for the expected totals.
md_check() {
    local cname=$1 kind=$2 args=() singles=() f msg i=0
    shift 2
    while [ $# -gt 0 ] && [ "$1" != -- ]; do args+=("$1"); shift; done
    [ $# -gt 0 ] && shift
    for f in "$@"; do
        "$REPORT" --format json -o "$TMP/single.$i.json" "$f" || { bad "$cname" "report of $f"; return; }
        singles+=("$TMP/single.$i.json")
        i=$((i + 1))
    done
    if ! "$REPORT" --format json -o "$TMP/$cname.json" "${args[@]}" 2>"$TMP/$cname.rerr"; then
        bad "$cname" "heapprof-report failed: $(head -c 300 "$TMP/$cname.rerr")"
    elif msg=$(python3 "$CHECK_MD" "$kind" "$TMP/$cname.json" "${singles[@]}" 2>&1); then
        ok "$cname"
    else
        bad "$cname" "$(echo "$msg" | head -5 | tr '\n' ';')"
    fi
}

# exit_of NAME / dump_of NAME: the run's exit profile, its numbered dump.
exit_of() { ls "$TMP/$1"/p.*.hpf 2>/dev/null | head -1; }
dump_of() { ls "$TMP/$1"/p.*.hpf.1 2>/dev/null | head -1; }

if run small dump_signal=12 "$MD" 10 && run large dump_signal=12 "$MD" 30; then
    if [ -z "$(dump_of small)" ] || [ -z "$(dump_of large)" ]; then
        bad merge-snapshots "no numbered dump: $(ls "$TMP/small" "$TMP/large" | tr '\n' ' ')"
    else
        md_check merge-snapshot snapshot "$(dump_of small)"
        md_check merge-snapshots snapshots --merge "$(dump_of small)" "$(exit_of small)" -- "$(exit_of small)"
        md_check merge-processes processes --merge "$(dump_of small)" "$(exit_of small)" \
            "$(exit_of large)" "$(dump_of large)" -- "$(exit_of small)" "$(exit_of large)"
    fi
    md_check diff-json diff --diff "$(exit_of small)" "$(exit_of large)"
    # Text: site_big grew most (20,000 bytes), site_small_only is gone (-150 B).
    if "$REPORT" --diff "$(exit_of small)" "$(exit_of large)" >"$TMP/diff.txt" 2>"$TMP/diff.err" &&
        awk '/^grew: /{s="grew"} /^shrank: /{s="shrank"} /^#1 /{first[s]=1; next} first[s]==1 && /#0 /{print s, $2; first[s]=2}' \
            "$TMP/diff.txt" | tr '\n' ' ' | grep -qx 'grew site_big shrank site_small_only ' &&
        grep -q '^#1  context [0-9]* (gone): -150 B total_size$' "$TMP/diff.txt"; then
        ok diff-text
    else
        bad diff-text "$(head -c 300 "$TMP/diff.err"; grep -E '^(grew|shrank|#)' "$TMP/diff.txt" | head -6 | tr '\n' ';')"
    fi
    # Without --merge, text and JSON keep one section (object) per profile.
    n=$("$REPORT" --format json "$(exit_of small)" "$(exit_of large)" |
        python3 -c 'import json,sys; d=json.load(sys.stdin); print(len(d) if isinstance(d, list) else 0)')
    if [ "$n" = 2 ]; then ok no-merge-default; else bad no-merge-default "JSON of two profiles: $n objects"; fi
fi

if run forks "" "$MD" fork 7 5; then
    set -- "$TMP"/forks/p.*.hpf
    if [ $# -eq 2 ]; then
        md_check merge-fork fork --merge "$@" -- "$@"
    else
        bad merge-fork "expected the parent's and the child's profiles, got $*"
    fi
fi

# Two programs linked at one address (non-PIE, different build ids): merged, the second moves
# above the first, and each stack still names its own program's functions (libdwfl would put an
# executable at its link address whatever bias it was given).
build "$PBIN/gcc/merge_diff_nopie" gcc -O0 -g -fno-omit-frame-pointer -no-pie test/profiling/merge_diff.c
build "$PBIN/gcc/merge_diff_nopie2" gcc -O0 -g -fno-omit-frame-pointer -no-pie \
    -Wl,--build-id=0x6865617070726f66 test/profiling/merge_diff.c
if run nopie1 dump_signal=12 "$PBIN/gcc/merge_diff_nopie" 10 &&
    run nopie2 dump_signal=12 "$PBIN/gcc/merge_diff_nopie2" 10; then
    md_check merge-nopie programs --merge "$(exit_of nopie1)" "$(exit_of nopie2)" -- \
        "$(exit_of nopie1)" "$(exit_of nopie2)"
fi

export PYTHONMALLOC=malloc PYTHONHASHSEED=0
if run py "" /usr/bin/python3 -c 'import subprocess, sys
subprocess.run([sys.executable, "-c", "import json, decimal"], check=True)
import email.parser'; then
    set -- "$TMP"/py/p.*.hpf
    if [ $# -eq 2 ]; then
        md_check merge-python3 same-stacks --merge "$@" -- "$@"
        md_check diff-python3-self self-diff --diff "$1" "$1"
    else
        bad merge-python3 "expected two profiles, got $*"
    fi
fi
unset PYTHONMALLOC PYTHONHASHSEED
