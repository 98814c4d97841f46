# A process that execs while its interval thread writes a dump of 4,096 contexts (back to back,
# at 1 ms): every numbered dump is whole (written as N.tmp and named when its end is written).
# Ten runs, from 3 to 15 ms of dumps before the exec.

# The old build left a numbered file without its end in 3 runs of 10. Under a seccomp filter
# the shim did not see installed (a container's) numbered dumps are written in place (no call
# they did not make before): then the test does not apply.
ename=exec-during-dump
seccomp=$(sed -n 's/^Seccomp:[[:space:]]*//p' /proc/self/status 2>/dev/null)
if [ "${seccomp:-0}" != 0 ]; then
    skip "$ename" "this process runs under a seccomp filter (Seccomp: $seccomp)"
    return
fi
build "$PBIN/gcc/exec_dumping" gcc -O2 -g test/profiling/exec_dumping.c
fails="" dumps=0 failed_run=""
for i in 1 2 3 4 5 6 7 8 9 10; do
    if ! run "$ename-$i" "dump_interval_ms=1" "$PBIN/gcc/exec_dumping" $((i % 5 + 1)); then
        failed_run=1 # (said by run)
        break
    fi
    for f in "$TMP/$ename-$i"/p.*.hpf.*; do
        case $f in
        *.tmp) continue ;;
        *"*") continue ;; # no dump at all in this run
        esac
        dumps=$((dumps + 1))
        "$REPORT" --format json -o "$TMP/ed.json" "$f" 2>"$TMP/ed.err" ||
            fails="$fails $(basename "$f"): $(head -c 150 "$TMP/ed.err");"
    done
done
if [ -n "$failed_run" ]; then
    :
elif [ -n "$fails" ]; then
    bad "$ename" "$(echo "$fails" | head -c 400)"
elif [ $dumps -lt 10 ]; then
    bad "$ename" "$dumps numbered dumps in ten runs, expected at least 10"
else
    ok "$ename"
fi
