# A frame of generated code (no call frame information, a frame pointer) between an allocating
# function and main: the cfi walk steps through it with its frame pointer.
build "$PBIN/gcc/jit_frames" gcc -O2 -g test/profiling/jit_frames.c
name=jit-frames
if run "$name" "" "$PBIN/gcc/jit_frames"; then
    check "$name" jit_frames "$(first_profile "$TMP/$name")"
fi
