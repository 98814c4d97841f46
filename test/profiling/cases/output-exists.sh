# A profile written to PATH-1 because PATH existed is announced once on stderr at the default
# verbosity (plain LD_PRELOAD): the old file is left as it was, the new one is PATH-1. No line
# when PATH is free, none at verbosity=0 or with say_renamed=0, none on the processes' stderr
# under heapprof-run -q; at verbosity=2 the "profile written to" note says it.
d=$TMP/exists
mkdir -p "$d"
echo old >"$d/p.hpf"
# shim_true OPTIONS: /bin/true under the shim, profile asked at $d/p.hpf; stderr in $d/err.
shim_true() {
    HEAPPROF_OPTIONS="output=$d/p.hpf${1:+:$1}" LD_PRELOAD=$SHIM /bin/true 2>"$d/err"
}
if shim_true "" && [ "$(cat "$d/p.hpf")" = old ] && [ -s "$d/p.hpf-1" ] &&
    [ "$(wc -l <"$d/err")" -eq 1 ] &&
    grep -qx "heapprof: $d/p.hpf exists: this profile is written to $d/p.hpf-1" "$d/err"; then
    ok output-exists-announced
else
    bad output-exists-announced "stderr: $(head -c 300 "$d/err"), files: $(ls "$d" | tr '\n' ' ')"
fi
# A second run: PATH-2, said the same way.
if shim_true "" && [ -s "$d/p.hpf-2" ] && [ "$(wc -l <"$d/err")" -eq 1 ] &&
    grep -q "exists: this profile is written to $d/p.hpf-2\$" "$d/err"; then
    ok output-exists-second
else
    bad output-exists-second "stderr: $(head -c 300 "$d/err")"
fi
if shim_true "verbosity=0" && [ -s "$d/p.hpf-3" ] && [ ! -s "$d/err" ]; then
    ok output-exists-quiet
else
    bad output-exists-quiet "stderr: $(head -c 300 "$d/err")"
fi
if shim_true "verbosity=2" && [ "$(wc -l <"$d/err")" -eq 1 ] &&
    grep -qx "heapprof: profile written to $d/p.hpf-4" "$d/err"; then
    ok output-exists-verbose
else
    bad output-exists-verbose "stderr: $(head -c 300 "$d/err")"
fi
if shim_true "say_renamed=0" && [ -s "$d/p.hpf-5" ] && [ ! -s "$d/err" ]; then
    ok output-exists-say-renamed-off
else
    bad output-exists-say-renamed-off "stderr: $(head -c 300 "$d/err")"
fi
# heapprof-run -q -o FILE: the run's second process writes FILE-1 and says nothing on its stderr.
rm -f "$d"/p.hpf*
if "$ROOT/scripts/heapprof-run" -q -o "$d/p.hpf" -- /bin/sh -c '/bin/true; /bin/true' 2>"$d/err" &&
    [ -s "$d/p.hpf" ] && [ -s "$d/p.hpf-1" ] && [ ! -s "$d/err" ]; then
    ok output-exists-heapprof-run-quiet
else
    bad output-exists-heapprof-run-quiet "stderr: $(head -c 300 "$d/err"), files: $(ls "$d" | tr '\n' ' ')"
fi
rm -f "$d"/p.hpf*
if shim_true "" && [ -s "$d/p.hpf" ] && [ ! -s "$d/err" ]; then
    ok output-free-silent
else
    bad output-free-silent "stderr: $(head -c 300 "$d/err")"
fi
