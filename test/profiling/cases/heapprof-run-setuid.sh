# heapprof-run refuses programs setuid to another user and programs with file capabilities, and
# runs those the preload does reach (a setuid program of the user running it, a setuid #!
# script). Needs root, to make such files.
# timeout: 300
if [ "$(id -u)" != 0 ]; then
    skip heapprof-run-setuid "heapprof-run's setuid and capability refusals are tested only when run as root"
    return
fi
mkdir -p "$TMP/refuse"
# Root running a program setuid to another user changes its effective id: no preload.
cp "$PBIN/gcc/sites" "$TMP/refuse/suid" && chown 65534 "$TMP/refuse/suid" && chmod 4755 "$TMP/refuse/suid"
run_refused heapprof-run-refuses-setuid "is setuid/setgid" "$TMP/refuse/suid"
# The kernel ignores the set-id bits of a #! script: it runs as the caller, and is profiled.
name=heapprof-run-setuid-script
printf '#!/bin/sh\nexec "%s"\n' "$PBIN/gcc/sites" >"$TMP/refuse/suid.sh" &&
    chown 65534 "$TMP/refuse/suid.sh" && chmod 4755 "$TMP/refuse/suid.sh"
"$ROOT/scripts/heapprof-run" -q -o "$TMP/suidsh.%p.hpf" "$TMP/refuse/suid.sh" >/dev/null 2>"$TMP/suidsh.err"
check "$name" exit "$(ls -t "$TMP"/suidsh.*.hpf 2>/dev/null | head -1)"
# Setuid to root, run by root: nothing changes, the preload works, so it is profiled.
name=heapprof-run-setuid-own
cp "$PBIN/gcc/sites" "$TMP/refuse/suid0" && chmod 4755 "$TMP/refuse/suid0"
"$ROOT/scripts/heapprof-run" -q -o "$TMP/suid0.%p.hpf" "$TMP/refuse/suid0" >/dev/null 2>"$TMP/suid0.err"
check "$name" exit "$(ls "$TMP"/suid0.*.hpf 2>/dev/null | head -1)"
# File capabilities, for a user who is not root (a directory that user can reach).
capdir=$(mktemp -d)
chmod 755 "$capdir"
cp "$PBIN/gcc/sites" "$capdir/capd" && setcap cap_net_raw+ep "$capdir/capd" 2>"$TMP/setcap.err" ||
    bad heapprof-run-refuses-capabilities "setcap failed (libcap2-bin): $(head -c 200 "$TMP/setcap.err")"
setpriv --reuid=65534 --regid=65534 --clear-groups \
    "$ROOT/scripts/heapprof-run" -q -o "$capdir/c.%p.hpf" "$capdir/capd" >/dev/null 2>"$TMP/cap.err"
rc=$?
if [ $rc -eq 2 ] && grep -q "^heapprof-run: .*has file capabilities (cap_net_raw=ep)" "$TMP/cap.err" &&
    ! ls "$capdir"/c.*.hpf >/dev/null 2>&1; then
    ok heapprof-run-refuses-capabilities
else
    bad heapprof-run-refuses-capabilities "rc=$rc, stderr: $(head -c 300 "$TMP/cap.err")"
fi
rm -rf "$capdir"
