/* mimalloc's aligned allocation functions without a heap: the _aligned and _aligned_at forms,
 * memalign, posix_memalign, aligned_alloc, valloc, pvalloc. */
#include "core/mimalloc_internal.h"

#include <errno.h>

/* A block of the shim's aligned at offset (placeable(a, o) holds). */
static void *aligned_block(size_t n, size_t a, size_t o, int zero)
{
    if (o == 0)
        return hp_alloc(n, a > 16 ? a : 0, zero);
    return hp_alloc_from(NULL, NULL, n, a, o, zero);
}

void *hp_mi_aligned_at(size_t n, size_t a, size_t o, int zero)
{
    if (valid(a, o))
        return aligned_block(n, a, o, zero);
    void *(*fn)(size_t, size_t, size_t) = zero ? REAL(mi_zalloc_aligned_at) : REAL(mi_malloc_aligned_at);
    return fn ? fn(n, a, o) : NULL;
}

SIMPLE(mi_malloc_aligned, (size_t n, size_t a), n COMMA a, hp_mi_aligned_at(n, a, 0, 0))

SIMPLE(mi_malloc_aligned_at, (size_t n, size_t a, size_t o), n COMMA a COMMA o, hp_mi_aligned_at(n, a, o, 0))

SIMPLE(mi_zalloc_aligned, (size_t n, size_t a), n COMMA a, hp_mi_aligned_at(n, a, 0, 1))

SIMPLE(mi_zalloc_aligned_at, (size_t n, size_t a, size_t o), n COMMA a COMMA o, hp_mi_aligned_at(n, a, o, 1))

void *hp_mi_calloc_aligned(const void *ra, size_t c, size_t n, size_t a)
{
    ENTRY(mi_calloc_aligned, c, n, a);
    size_t t;
    if (mul_over(c, n, &t) || !valid(a, 0))
        return REAL(mi_calloc_aligned) ? hp_mi_real.mi_calloc_aligned(c, n, a) : NULL;
    return aligned_block(t, a, 0, 1);
}

void *hp_mi_calloc_aligned_at(const void *ra, size_t c, size_t n, size_t a, size_t o)
{
    ENTRY(mi_calloc_aligned_at, c, n, a, o);
    size_t t;
    if (mul_over(c, n, &t) || !valid(a, o))
        return REAL(mi_calloc_aligned_at) ? hp_mi_real.mi_calloc_aligned_at(c, n, a, o) : NULL;
    return aligned_block(t, a, o, 1);
}

/* memalign, posix_memalign, aligned_alloc: alignments mimalloc refuses are its to refuse. */
void *hp_mi_memalign(const void *ra, size_t a, size_t n)
{
    ENTRY(mi_memalign, a, n);
    if (!valid(a, 0))
        return REAL(mi_memalign) ? hp_mi_real.mi_memalign(a, n) : NULL;
    return aligned_block(n, a, 0, 0);
}

void *hp_mi_aligned_alloc(const void *ra, size_t a, size_t n)
{
    ENTRY(mi_aligned_alloc, a, n);
    if (!valid(a, 0))
        return REAL(mi_aligned_alloc) ? hp_mi_real.mi_aligned_alloc(a, n) : NULL;
    return aligned_block(n, a, 0, 0);
}

int hp_mi_posix_memalign(const void *ra, void **out, size_t a, size_t n)
{
    ENTRY(mi_posix_memalign, out, a, n);
    if (!out || a % sizeof(void *) != 0 || !valid(a, 0))
        return REAL(mi_posix_memalign) ? hp_mi_real.mi_posix_memalign(out, a, n) : EINVAL;
    void *p = aligned_block(n, a, 0, 0);
    if (!p)
        return ENOMEM;
    *out = p;
    return 0;
}

void *hp_mi_valloc(const void *ra, size_t n)
{
    ENTRY(mi_valloc, n);
    return hp_valloc(n);
}

void *hp_mi_pvalloc(const void *ra, size_t n)
{
    ENTRY(mi_pvalloc, n);
    return hp_pvalloc(n);
}
