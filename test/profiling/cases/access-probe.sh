# timeout: 300
# test/access/run.sh (make access-check) as part of make check: heapprof-cc's builds in every
# mode counted into the shadow under the probe preload (the shim's attach and shadow code alone),
# instrumented libraries and an RTLD_LOCAL one, profiles with live blocks, and the driver's
# behaviour (preprocessing, configure-style tests, objects of an unknown MemProf ABI refused).
# Each of its verdicts is one here, named access-probe-NAME.
n=0 summary=
while IFS= read -r line; do
    case $line in
    "ok "*) ok "access-probe-${line#ok }"; n=$((n + 1)) ;;
    "FAIL "*)
        l=${line#FAIL }
        bad "access-probe-${l%%:*}" "${l#*: }"; n=$((n + 1)) ;;
    *" passed, "*" failed") summary=$line ;;
    esac
done < <(cd "$ROOT" && sh test/access/run.sh "$BUILD" "$TMP/access-probe" 2>&1)
[ $n -gt 0 ] && [ -n "$summary" ] || bad access-probe "test/access/run.sh gave $n verdicts and no summary line"
