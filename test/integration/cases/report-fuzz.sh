# The profile reader's libFuzzer target (report/fuzz/fuzz_profile.c) for a few seconds on its
# seed corpus: every seed (crashes found before among them) and what the fuzzer derives from
# them must parse or fail cleanly, and print in both formats, under ASan and UBSan. Long runs:
# make fuzz FUZZ_TIME=SECONDS (docs/REPORT.md, "Fuzzing the reader").
# timeout: 300

clang=${CLANG:-clang}
if ! echo 'int LLVMFuzzerTestOneInput(const char *d, long n) { return 0; }' |
    "$clang" -fsanitize=fuzzer -x c -o "$TMP/probe" - >/dev/null 2>&1; then
    skip report-fuzz "$clang cannot build libFuzzer targets (Debian: libclang-rt-dev)"
    return 0
fi
if ! make -s -C "$ROOT" CLANG="$clang" BUILD="$BUILD" "$BUILD/fuzz_profile" >"$TMP/build.log" 2>&1; then
    bad report-fuzz "build failed: $(head -c 300 "$TMP/build.log")"
    return 0
fi
mkdir -p "$TMP/new"
# Every seed once, then 10 s of mutations; new inputs go to $TMP/new, never into the tree.
timeout -k 5 120 "$BUILD/fuzz_profile" -max_total_time=10 -timeout=30 -rss_limit_mb=2048 \
    -artifact_prefix="$TMP/" "$TMP/new" report/fuzz/corpus >"$TMP/fuzz.log" 2>&1
rc=$?
runs=$(sed -n 's/^Done \([0-9]*\) runs.*/\1/p' "$TMP/fuzz.log")
seeds=$(ls report/fuzz/corpus | wc -l)
if [ $rc -ne 0 ]; then
    bad report-fuzz "$(describe $rc): $(grep -m3 'ERROR\|SUMMARY\|Test unit written' "$TMP/fuzz.log" | tr '\n' ';')"
elif [ -z "$runs" ] || [ "$runs" -lt "$seeds" ]; then
    bad report-fuzz "ran ${runs:-no} inputs, fewer than the $seeds seeds: $(tail -3 "$TMP/fuzz.log" | tr '\n' ';')"
else
    ok report-fuzz
    echo "    $runs inputs in 10 s"
fi
