# heapprof-run refuses, with one line saying why, the programs LD_PRELOAD cannot reach (the
# loader would run them unprofiled, or print its own message and run them unprofiled): static
# ones and ELF files of another class or machine than the shim; also a shim being rebuilt.
# timeout: 300
mkdir -p "$TMP/refuse"
if gcc -static -O1 -o "$TMP/refuse/static" test/progs/t_ctor.c 2>"$TMP/refuse/cc.err"; then
    run_refused heapprof-run-refuses-static "is statically linked" "$TMP/refuse/static"
    # A #! script is judged by its interpreter.
    printf '#!%s\n' "$TMP/refuse/static" >"$TMP/refuse/script" && chmod 755 "$TMP/refuse/script"
    run_refused heapprof-run-refuses-static-interpreter "script's interpreter .*/static is statically linked" "$TMP/refuse/script"
else
    bad heapprof-run-refuses-static "cannot link statically: $(head -c 200 "$TMP/refuse/cc.err")"
fi
# Class (e_ident[4]) and machine (e_machine) bytes changed in a copy: heapprof-run looks at
# them before anything runs.
cp "$PBIN/gcc/sites" "$TMP/refuse/elf32" && printf '\001' |
    dd of="$TMP/refuse/elf32" bs=1 seek=4 conv=notrunc 2>/dev/null
run_refused heapprof-run-refuses-32-bit "is a 32-bit x86-64 ELF file but .* is a 64-bit" "$TMP/refuse/elf32"
cp "$PBIN/gcc/sites" "$TMP/refuse/arm" && printf '\267' |
    dd of="$TMP/refuse/arm" bs=1 seek=18 conv=notrunc 2>/dev/null
run_refused heapprof-run-refuses-other-machine "is a 64-bit aarch64 ELF file but" "$TMP/refuse/arm"
# A shim library that make is relinking (empty, then cut short): said as such, not as a machine
# of unknown class.
: >"$TMP/refuse/empty.so"
head -c 10 "$SHIM" >"$TMP/refuse/cut.so"
env_shim=${HEAPPROF_SHIM-}
export HEAPPROF_SHIM="$TMP/refuse/empty.so"
run_refused heapprof-run-refuses-empty-shim "empty.so is not an ELF library (empty, or being rebuilt?)$" "$PBIN/gcc/sites"
export HEAPPROF_SHIM="$TMP/refuse/cut.so"
run_refused heapprof-run-refuses-cut-shim "cut.so is a damaged ELF file (cut short, or being rebuilt?)$" "$PBIN/gcc/sites"
if [ -n "$env_shim" ]; then export HEAPPROF_SHIM="$env_shim"; else unset HEAPPROF_SHIM; fi
# An -o whose directory does not exist: every process would run unprofiled, saying so.
run_refused heapprof-run-refuses-missing-output-dir "-o $TMP/no-such-dir/p.hpf: directory $TMP/no-such-dir does not exist" \
    -o "$TMP/no-such-dir/p.hpf" "$PBIN/gcc/sites"
