# heapprof-run exits with its command's status (3 here), the profile written.
# timeout: 300
if "$ROOT/scripts/heapprof-run" -o "$TMP/x.%p.hpf" python3 -c 'import sys; sys.exit(3)' 2>/dev/null; then rc=0; else rc=$?; fi
if [ $rc -eq 3 ] && ls "$TMP"/x.*.hpf >/dev/null 2>&1; then ok heapprof-run-status; else bad heapprof-run-status "rc=$rc"; fi
