/* instrument/: the runtime that heapprof-cc links into instrumented programs and libraries
 * (build/libheapprof_rt.a plus one small object per module): the functions clang's MemProf
 * instrumentation and gcc's ThreadSanitizer (or asan) callbacks call, counting into the shim's shadow when the shim
 * is preloaded and into a shadow of its own (which nothing reads) when it is not, so the same
 * binary runs with or without the shim.
 *
 * Who calls what:
 *   executables: .preinit_array (preinit.c) -> hp_rt_init, before any library's constructor
 *   every module: its module object's constructor (module.c, priority 1)
 *                 -> __heapprof_rt_module(mode, address in the module) -> the shim's attach
 *   clang modules: memprof.module_ctor (priority 1) -> __memprof_init,
 *                  __memprof_version_mismatch_check_v1
 *   instrumented code: inline increments through __memprof_shadow_memory_dynamic_address, or
 *                  the callbacks of memprof.c and asan.c
 *
 * One runtime for the process: its exported symbols are interposable (default visibility, -fPIC),
 * and heapprof-cc makes executables export them, so every module's references bind to the
 * first definition in the global scope. A copy that is not merged so (a library opened with
 * RTLD_LOCAL into a process with no instrumented executable) still attaches to the shim, or
 * finds the same shadow at its fixed place (shadow.h), so counts never go to two places. */
#ifndef HP_INSTRUMENT_H
#define HP_INSTRUMENT_H

#include <stddef.h>
#include <stdint.h>

#include "shadow/shadow.h"

#define HP_RT_EXPORT __attribute__((visibility("default")))

/* The MemProf ABI version this runtime speaks: clang 14 to 16 call the check of version 1. */
#define HP_RT_MEMPROF_ABI 1

/* Plane 0 of the shadow (the symbol clang's inline code reads at each function's entry),
 * plane 1 for writes and plane 2 for per-word counts, 0 when there is none (no shim, it could
 * not reserve one, or no callback module attached; plane 2 also: word histograms off). */
extern uintptr_t __memprof_shadow_memory_dynamic_address HP_RT_EXPORT;
extern uintptr_t __heapprof_rt_wbase HP_RT_EXPORT;
extern uintptr_t __heapprof_rt_hbase HP_RT_EXPORT;

/* Set the shadow up (once; later calls return at once). */
void hp_rt_init(void);
/* A module announces itself: mode is an hp_attach_mode (shadow/attach.h). */
void __heapprof_rt_module(unsigned mode, const void *where) HP_RT_EXPORT;
/* A module called a MemProf version check this runtime does not know. */
void hp_rt_unknown_abi(unsigned version);

/* Count accesses to [a, a + n) as MemProf's runtime does for memory intrinsics: one per 8
 * bytes (at a, a + 8, ...), each in the granule of its address; write: also in plane 1; each
 * step also in the word of its address (plane 2) where the granule is armed. */
void hp_rt_count_range(uintptr_t a, size_t n, int write);

/* The word of a in plane 2, for an access to a granule the shim armed (a small block's). */
static inline void hp_rt_count_word(uintptr_t a)
{
    uintptr_t h = __heapprof_rt_hbase;
    if (h)
        hp_shadow_word_bump(h, a);
}

/* One load or store at a: its granule's counter, the writes plane's for a store, and, where
 * the old counter says the shim armed the granule (its sign bit), the word's counter. Other
 * accesses pay a test of a value loaded anyway. */
static inline void hp_rt_count(uintptr_t a, int write)
{
    uintptr_t b = __memprof_shadow_memory_dynamic_address;
    if (__builtin_expect(!b, 0))
        return; /* before init (gcc code run by an early constructor): nowhere to count */
    uintptr_t i = a >> 6; /* the granule: its counter is the i-th 8-byte word of a plane */
    if (write) {
        uintptr_t w = __heapprof_rt_wbase;
        if (w)
            ((uint64_t *)w)[i]++;
    }
    uint64_t *c = (uint64_t *)b + i;
    int armed; /* the counter is negative after the increment exactly when it was before */
#if defined(__x86_64__) && defined(__GCC_ASM_FLAG_OUTPUTS__)
    /* One add to memory and a jump on its sign flag (what inline code's addq costs, plus the
     * jump) instead of a load, add, store and test. */
    __asm__("addq $1, %1" : "=@ccs"(armed), "+m"(*c));
#else
    armed = (int64_t)++*c < 0;
#endif
    if (__builtin_expect(armed, 0))
        hp_rt_count_word(a);
}

#endif
