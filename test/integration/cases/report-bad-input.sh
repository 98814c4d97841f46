# heapprof-report on input that is no profile or never ends: /dev/zero, devices, directories,
# empty and growing files, pipes and FIFOs that deliver too much or nothing useful, missing and
# changed binaries. Each gives one clear line (an error and status 1, or a warning), never a
# hang or unbounded memory: every run has a timeout and a memory limit, so a regression fails
# here instead of eating the machine.
# timeout: 300

# The unsanitized tool: ASan reserves terabytes of address space, which ulimit -v forbids.
RPLAIN=$BUILD/heapprof-report
# 512 MiB of address space: far more than any input here needs, far less than an unbounded read.
LIMIT_KB=524288

# bounded OUT ERR ARGS...: heapprof-report ARGS under the limits; its status in $rc.
bounded() {
    local out=$1 err=$2
    shift 2
    (ulimit -v $LIMIT_KB; exec timeout -k 2 20 "$RPLAIN" "$@") >"$out" 2>"$err"
    rc=$?
}

# refused NAME PATTERN PATH [ENV...]: status 1, one line "heapprof-report: PATH: ...PATTERN...".
refused() {
    local name=$1 pattern=$2 path=$3
    bounded "$TMP/$name.out" "$TMP/$name.err" "$path"
    if [ $rc -ne 1 ] || [ "$(wc -l <"$TMP/$name.err")" -ne 1 ] ||
        ! grep -q "^heapprof-report: $path: .*$pattern" "$TMP/$name.err"; then
        bad "$name" "$(describe $rc), stderr: $(head -c 300 "$TMP/$name.err" | tr '\n' ';')"
    else
        ok "$name"
    fi
}

# A real profile to feed through pipes and to damage.
if ! run good "" ls -la /; then return 0; fi
good=$(first_profile "$TMP/good")

refused report-bad-dev-zero "a character device, not a profile" /dev/zero
refused report-bad-dev-null "a character device, not a profile" /dev/null
refused report-bad-directory "a directory, not a profile" "$TMP"
: >"$TMP/empty.hpf"
refused report-bad-empty "empty file" "$TMP/empty.hpf"
# Cut inside its PROCESS record: nothing usable (a cut after it is read: case cut-short).
head -c 100 "$good" >"$TMP/cut.hpf"
refused report-bad-truncated "cut short at byte 100 before its PROCESS record" "$TMP/cut.hpf"
refused report-bad-missing "No such file or directory" "$TMP/none.hpf"

# Pipes: a profile through one reads like the file; endless zeros and bytes after END stop at
# once, even while the writer keeps its end open.
bounded "$TMP/pipe.out" "$TMP/pipe.err" <(cat "$good")
bounded "$TMP/file.out" "$TMP/file.err" "$good"
if [ $rc -eq 0 ] && [ -s "$TMP/file.out" ] &&
    diff <(sed 1d "$TMP/pipe.out") <(sed 1d "$TMP/file.out") >/dev/null; then
    ok report-bad-pipe-profile
else
    bad report-bad-pipe-profile "$(describe $rc): $(head -c 300 "$TMP/pipe.err")"
fi
mkfifo "$TMP/fifo"
(cat "$good" >"$TMP/fifo" &)
bounded "$TMP/fifo.out" "$TMP/fifo.err" "$TMP/fifo"
if [ $rc -eq 0 ] && grep -q '^top ' "$TMP/fifo.out"; then ok report-bad-fifo-profile
else bad report-bad-fifo-profile "$(describe $rc): $(head -c 300 "$TMP/fifo.err")"; fi

# pipe_refused NAME PATTERN COMMAND...: COMMAND's output through a pipe is refused in one line.
pipe_refused() {
    local name=$1 pattern=$2
    shift 2
    bounded "$TMP/$name.out" "$TMP/$name.err" <("$@" 2>/dev/null)
    if [ $rc -ne 1 ] || [ "$(wc -l <"$TMP/$name.err")" -ne 1 ] ||
        ! grep -q "^heapprof-report: /dev/fd/[0-9]*: .*$pattern" "$TMP/$name.err"; then
        bad "$name" "$(describe $rc), stderr: $(head -c 300 "$TMP/$name.err" | tr '\n' ';')"
    else
        ok "$name"
    fi
}
pipe_refused report-bad-pipe-zeros "bad magic" cat /dev/zero
pipe_refused report-bad-pipe-after-end "after the END record" sh -c 'cat "$1"; echo x; sleep 60' sh "$good"
# A valid header, then a record that says it is 4 GiB long.
pipe_refused report-bad-pipe-declared "declares 4294967295 bytes" \
    sh -c 'head -c 32 "$1"; printf "\007\0\0\0\0\0\0\0\377\377\377\377\0\0\0\0"; sleep 60' sh "$good"
# A valid header, then zero-size records without end: past the bound (lowered to 4 MiB here).
HEAPPROF_REPORT_MAX_SIZE=4M pipe_refused report-bad-pipe-endless \
    "more than 4194304 bytes from a pipe" sh -c 'head -c 32 "$1"; cat /dev/zero' sh "$good"

# A file that grows while it is read: read as large as it was when opened.
head -c 32 "$good" >"$TMP/grow.hpf"
(for i in $(seq 200); do head -c 4096 /dev/zero; sleep 0.02; done >>"$TMP/grow.hpf" &)
refused report-bad-growing "no END record\|truncated record header" "$TMP/grow.hpf"

# Binaries gone or changed since the run: one warning line each, the report still made.
cp /usr/bin/ls "$TMP/myls"
run changed "" "$TMP/myls" -la / && {
    p=$(first_profile "$TMP/changed")
    rm "$TMP/myls"
    bounded "$TMP/gone.out" "$TMP/gone.err" "$p"
    if [ $rc -eq 0 ] && [ "$(grep -c . "$TMP/gone.err")" -eq 1 ] &&
        grep -q "^heapprof-report: warning: .*myls: cannot read it" "$TMP/gone.err"; then
        ok report-bad-binary-gone
    else
        bad report-bad-binary-gone "$(describe $rc): $(head -c 300 "$TMP/gone.err")"
    fi
    cp /usr/bin/cat "$TMP/myls"
    bounded "$TMP/other.out" "$TMP/other.err" -f json "$p"
    if [ $rc -eq 0 ] && [ "$(grep -c . "$TMP/other.err")" -eq 1 ] &&
        grep -q "^heapprof-report: warning: .*myls: build id differs" "$TMP/other.err"; then
        ok report-bad-binary-changed
    else
        bad report-bad-binary-changed "$(describe $rc): $(head -c 300 "$TMP/other.err")"
    fi
}
