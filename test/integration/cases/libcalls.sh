# The shim's own data never goes through libc's memcpy, memmove or memset: in the built library
# only the functions that handle the program's memory call them (objdump).

# They may be interposed, and sanitizers watch them (docs/DESIGN.md); compilers turn copy loops
# and large struct assignments into such calls on their own, so the build itself is checked.
# Allowed: calloc's zeroing, realloc's copy, sigaction's answer, mimalloc's API
# (core/mimalloc_*.c), and the entry points link-time optimisation inlined those into.
calls_test libcalls 'call.*<(memcpy|memmove|memset)(@plt)?>' \
    'hp_alloc|hp_alloc_x|hp_alloc_from|hp_calloc|hp_realloc|hp_reallocarray|move_block|realloc_realign|(hp_)?(rallocx|xallocx|mallocx)|calloc|realloc|reallocarray|(hp_)?sigaction|(hp_)?mi_[a-z_]+|do_realloc|do_realloc_aligned|dup_bytes|heap_dup|new_realloc'
