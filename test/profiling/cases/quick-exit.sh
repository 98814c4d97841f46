# quick_exit: the profile is written after the program's at_quick_exit handlers; status kept.
# timeout: 300
name=quick-exit
have_prog "$name" "$PBIN/gcc/quick_exit" || return
fresh "$name"
HEAPPROF_OPTIONS="output=$TMP/$name/p.%p.hpf" LD_PRELOAD="$SHIM" "$PBIN/gcc/quick_exit" 2>"$TMP/$name.err"
st=$?
if [ $st -ne 3 ] || ! grep -q "handler ran" "$TMP/$name.err"; then
    bad "$name" "status $st, expected 3: $(head -c 300 "$TMP/$name.err")"
elif [ "$(ls "$TMP/$name" | wc -l)" -ne 1 ]; then
    bad "$name" "files: $(ls "$TMP/$name" | tr '\n' ' ')"
else
    check "$name" quick_exit "$(first_profile "$TMP/$name")"
fi
