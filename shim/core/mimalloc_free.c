/* mimalloc's functions that free a block or answer its size: mi_free and its sized and
 * aligned forms, mi_usable_size and its aliases, mi_expand. */
#include "core/mimalloc_internal.h"

/* The shim's block through the shim, any other through mimalloc's function of the name the
 * program called (which may check more). */
#define FREE_FN(name, params, ...)                  \
    void hp_##name(const void *ra, UNPAREN params)  \
    {                                               \
        ENTRY(name, p, ##__VA_ARGS__);              \
        if (hp_free_own(p))                         \
            return;                                 \
        if (REAL(name))                             \
            hp_mi_real.name(p, ##__VA_ARGS__);      \
        else                                        \
            hp_free(p);                             \
    }
FREE_FN(mi_free, (void *p))
FREE_FN(mi_cfree, (void *p))
FREE_FN(mi_free_size, (void *p, size_t n), n)
FREE_FN(mi_free_aligned, (void *p, size_t a), a)
FREE_FN(mi_free_size_aligned, (void *p, size_t n, size_t a), n, a)
#undef FREE_FN

#define SIZE_FN(name)                                   \
    size_t hp_##name(const void *ra, const void *p)     \
    {                                                   \
        ENTRY(name, p);                                 \
        if (p && !hp_owns((void *)p) && REAL(name))     \
            return hp_mi_real.name(p);                  \
        return hp_usable_size((void *)p);               \
    }
SIZE_FN(mi_usable_size)
SIZE_FN(mi_malloc_size)
SIZE_FN(mi_malloc_usable_size)
#undef SIZE_FN

/* mi_expand resizes only in place: a block of the shim's keeps its size, so the answer is p
 * when newsize fits in what it has, as mimalloc answers for its own blocks. */
#define EXPAND_FN(name)                                       \
    void *hp_##name(const void *ra, void *p, size_t n)        \
    {                                                         \
        ENTRY(name, p, n);                                    \
        if (!mine(p))                                         \
            return REAL(name) ? hp_mi_real.name(p, n) : NULL; \
        return n <= hp_usable_size(p) ? p : NULL;             \
    }
EXPAND_FN(mi_expand)
EXPAND_FN(mi__expand)
#undef EXPAND_FN
