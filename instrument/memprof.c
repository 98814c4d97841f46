/* clang's MemProf runtime interface (-fmemory-profile; clang 14 and 16 call the same names):
 * the init and version check its module constructor calls, the access callbacks of
 * -mllvm -memprof-use-callbacks, and the memory intrinsics it replaces in both modes. */
#include "instrument.h"

#include <string.h>

/* Every module constructor calls it: set up once. */
HP_RT_EXPORT void __memprof_init(void) { hp_rt_init(); }

/* Called after __memprof_init by modules of clang 14..16. A clang with another ABI calls
 * another number: those this runtime does not know are defined too, so such a program still
 * links and runs, and says once what is wrong instead of failing to load. */
HP_RT_EXPORT void __memprof_version_mismatch_check_v1(void) {}
#define HP_UNKNOWN_ABI(n) \
    HP_RT_EXPORT void __memprof_version_mismatch_check_v##n(void) { hp_rt_unknown_abi(n); }
HP_UNKNOWN_ABI(2)
HP_UNKNOWN_ABI(3)
HP_UNKNOWN_ABI(4)
HP_UNKNOWN_ABI(5)
HP_UNKNOWN_ABI(6)
HP_UNKNOWN_ABI(7)
HP_UNKNOWN_ABI(8)
HP_UNKNOWN_ABI(9)

/* Callback mode: one call per load or store, with its address. Stores also go to plane 1, so
 * reads and writes come apart. */
HP_RT_EXPORT void __memprof_load(uintptr_t a) { hp_rt_count(a, 0); }
HP_RT_EXPORT void __memprof_store(uintptr_t a) { hp_rt_count(a, 1); }

/* Memory intrinsics (memcpy, memmove, memset the compiler would emit or inline, struct copies
 * among them): counted as MemProf's runtime counts them, one access per 8 bytes of each range
 * read and written, then done by libc. */
HP_RT_EXPORT void *__memprof_memcpy(void *dst, const void *src, size_t n)
{
    hp_rt_count_range((uintptr_t)src, n, 0);
    hp_rt_count_range((uintptr_t)dst, n, 1);
    return memcpy(dst, src, n);
}

HP_RT_EXPORT void *__memprof_memmove(void *dst, const void *src, size_t n)
{
    hp_rt_count_range((uintptr_t)src, n, 0);
    hp_rt_count_range((uintptr_t)dst, n, 1);
    return memmove(dst, src, n);
}

HP_RT_EXPORT void *__memprof_memset(void *dst, int c, size_t n)
{
    hp_rt_count_range((uintptr_t)dst, n, 1);
    return memset(dst, c, n);
}

/* The steps a, a + 8, ... below a + n, counted granule by granule: MemProf's runtime adds them
 * one at a time; a 1 MiB memset is 16,384 additions here, not 131,072. */
void hp_rt_count_range(uintptr_t a, size_t n, int write)
{
    uintptr_t b = __memprof_shadow_memory_dynamic_address, w = __heapprof_rt_wbase;
    if (!b || !n)
        return;
    uintptr_t end = a + n;
    if (end < a)
        end = UINTPTR_MAX; /* a range that wraps: count up to the top */
    while (a < end) {
        uintptr_t g = (a & ~(uintptr_t)63) + 64;
        uintptr_t stop = g < end && g > a ? g : end;
        uint64_t steps = (stop - a + 7) / 8;
        uintptr_t off = (a & ~(uintptr_t)63) >> 3;
        uint64_t c = *(uint64_t *)(b + off);
        *(uint64_t *)(b + off) = c + steps;
        if (write && w)
            *(uint64_t *)(w + off) += steps;
        for (uint64_t k = 0; (int64_t)c < 0 && k < steps; k++) /* armed: each step's word */
            hp_rt_count_word(a + k * 8);
        uintptr_t next = a + steps * 8;
        if (next <= a)
            break;
        a = next;
    }
}
