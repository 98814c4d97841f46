# The instruction decoder of the allocator patcher (backend/x86.c) against objdump, on the first
# instructions of every function libc and libstdc++ export (x86_64 only).
DECODER_DIR=$ROOT/backend

name=x86-decoder
if [ "$(uname -m)" != x86_64 ]; then
    skip "$name" "not an x86_64 machine"
    return
fi
bin=$TMP/x86_boundaries
if ! cc -O1 -I"$DECODER_DIR" -o "$bin" "$ROOT/test/integration/x86_boundaries.c" "$DECODER_DIR/x86.c" -ldl; then
    bad "$name" "cannot build test/integration/x86_boundaries.c"
    return
fi
for lib in /lib/x86_64-linux-gnu/libc.so.6 /usr/lib/x86_64-linux-gnu/libstdc++.so.6; do
    if [ ! -f "$lib" ]; then
        skip "$name/${lib##*/}" "$lib not found"
        continue
    fi
    if msg=$(nm -D --defined-only "$lib" | awk '$2 == "T" || $2 == "W" {sub(/@.*/, "", $3); print $3}' |
        sort -u | "$bin" "$lib" | python3 "$ROOT/test/integration/check_x86.py" "$lib" 2>&1); then
        ok "$name/${lib##*/}"
    else
        bad "$name/${lib##*/}" "$(echo "$msg" | tail -3 | tr '\n' ' ')"
    fi
done
