/* gcc's asan callbacks (heapprof-cc's gcc mode for a gcc before 10, or HEAPPROF_GCC_INSTR=asan;
 * instrument/tsan.c has the callbacks of every later gcc), as gcc 12 emits them for
 * -fsanitize=kernel-address
 * --param asan-instrumentation-with-call-threshold=0 (no shadow of its own, no runtime linked):
 * one call before each load or store with its address (and size for the N forms). A sized
 * access counts one, as clang counts one per instruction; the N forms (struct copies) one per
 * 8 bytes, as clang's memcpy. The _noabort forms are what gcc calls (kernel-address recovers by
 * default); the others are there for -fno-sanitize-recover. */
#include "instrument.h"

#define HP_ASAN_SIZED(kind, write, size)                                                        \
    HP_RT_EXPORT void __asan_##kind##size##_noabort(uintptr_t a) { hp_rt_count(a, write); }  \
    HP_RT_EXPORT void __asan_##kind##size(uintptr_t a) { hp_rt_count(a, write); }

HP_ASAN_SIZED(load, 0, 1)
HP_ASAN_SIZED(load, 0, 2)
HP_ASAN_SIZED(load, 0, 4)
HP_ASAN_SIZED(load, 0, 8)
HP_ASAN_SIZED(load, 0, 16)
HP_ASAN_SIZED(store, 1, 1)
HP_ASAN_SIZED(store, 1, 2)
HP_ASAN_SIZED(store, 1, 4)
HP_ASAN_SIZED(store, 1, 8)
HP_ASAN_SIZED(store, 1, 16)

HP_RT_EXPORT void __asan_loadN_noabort(uintptr_t a, size_t n) { hp_rt_count_range(a, n, 0); }
HP_RT_EXPORT void __asan_loadN(uintptr_t a, size_t n) { hp_rt_count_range(a, n, 0); }
HP_RT_EXPORT void __asan_storeN_noabort(uintptr_t a, size_t n) { hp_rt_count_range(a, n, 1); }
HP_RT_EXPORT void __asan_storeN(uintptr_t a, size_t n) { hp_rt_count_range(a, n, 1); }

/* Before noreturn calls and throws, ASan unpoisons the stack; C++ dynamic initialisers are
 * bracketed for its init-order checks. Nothing to do for access counting. */
HP_RT_EXPORT void __asan_handle_no_return(void) {}
HP_RT_EXPORT void __asan_before_dynamic_init(const char *module) { (void)module; }
HP_RT_EXPORT void __asan_after_dynamic_init(void) {}
