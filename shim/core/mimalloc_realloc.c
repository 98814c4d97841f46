/* mimalloc's reallocation functions without a heap (the zeroing, count * size, aligned and
 * C++ forms), and the BSD names libmimalloc defines too: reallocf, reallocarr. */
#include "core/mimalloc_internal.h"

#include <errno.h>
#include <string.h>

void *hp_mi_moved(void *p, void *q, size_t n)
{
    if (!q)
        return NULL;
    size_t old = hp_usable_size(p);
    memcpy(q, p, old < n ? old : n);
    hp_free(p);
    return q;
}

/* realloc as mimalloc does it: size 0 leaves a block of size 0, never NULL for success; zero:
 * the bytes past the old usable size come zeroed (mi_rezalloc). */
static void *do_realloc(void *p, size_t n, int zero)
{
    if (!p)
        return hp_alloc(n, 0, zero);
    if (!hp_owns(p)) {
        void *(*fn)(void *, size_t) = zero ? REAL(mi_rezalloc) : REAL(mi_realloc);
        return fn ? fn(p, n) : hp_realloc(p, n);
    }
    size_t old = zero ? hp_usable_size(p) : 0;
    void *q;
    if (n == 0 && hp_realloc_zero_frees) {
        q = hp_alloc(0, 0, 0);
        if (q)
            hp_free(p);
    } else {
        q = hp_realloc(p, n);
    }
    if (q && zero && n > old)
        memset((char *)q + old, 0, n - old);
    return q;
}

/* The aligned reallocations: a new block with the alignment asked, the data across (zero: the
 * rest zeroed), the old block freed. A block of the shim's is 32-byte aligned, so alignments
 * up to 32 at a multiple of 32 only resize. */
static void *do_realloc_aligned(void *p, size_t n, size_t a, size_t o, int zero)
{
    if (!p)
        return hp_mi_aligned_at(n, a, o, zero);
    if (!hp_owns(p)) {
        void *(*fn)(void *, size_t, size_t, size_t) =
            zero ? REAL(mi_rezalloc_aligned_at) : REAL(mi_realloc_aligned_at);
        return fn ? fn(p, n, a, o) : NULL;
    }
    if (a <= HP_MIN_ALIGN && (o & (HP_MIN_ALIGN - 1)) == 0 && (a == 0 || hp_is_pow2(a)))
        return do_realloc(p, n, zero);
    return hp_mi_moved(p, hp_mi_aligned_at(n, a, o, zero), n);
}

SIMPLE(mi_realloc, (void *p, size_t n), p COMMA n, do_realloc(p, n, 0))

SIMPLE(mi_rezalloc, (void *p, size_t n), p COMMA n, do_realloc(p, n, 1))

/* Reallocations of count * size: an overflow is mimalloc's to answer. */
#define REALLOC_N(name, zero) \
    COUNTED_FORM(name, (void *p, size_t c, size_t n), p && !mine(p), do_realloc(p, t, zero), p, c, n)
REALLOC_N(mi_reallocn, 0)
REALLOC_N(mi_recalloc, 1)
#undef REALLOC_N

void *hp_mi_reallocf(const void *ra, void *p, size_t n)
{
    ENTRY(mi_reallocf, p, n);
    if (p && !mine(p))
        return REAL(mi_reallocf) ? hp_mi_real.mi_reallocf(p, n) : NULL;
    void *q = do_realloc(p, n, 0);
    if (!q && p)
        hp_free(p);
    return q;
}

void *hp_mi_reallocarray(const void *ra, void *p, size_t c, size_t n)
{
    ENTRY(mi_reallocarray, p, c, n);
    size_t t;
    if (mul_over(c, n, &t) || (p && !mine(p)))
        return REAL(mi_reallocarray) ? hp_mi_real.mi_reallocarray(p, c, n) : NULL;
    void *q = do_realloc(p, t, 0);
    if (!q)
        errno = ENOMEM;
    return q;
}

static int do_reallocarr(void *pp, size_t c, size_t n)
{
    void **op = pp;
    size_t t;
    if (!op || mul_over(c, n, &t) || (*op && !mine(*op)))
        return REAL(mi_reallocarr) ? hp_mi_real.mi_reallocarr(pp, c, n) : EINVAL;
    void *q = do_realloc(*op, t, 0);
    if (!q) {
        errno = ENOMEM;
        return ENOMEM;
    }
    *op = q;
    return 0;
}

int hp_mi_reallocarr(const void *ra, void *pp, size_t c, size_t n)
{
    ENTRY(mi_reallocarr, pp, c, n);
    return do_reallocarr(pp, c, n);
}

SIMPLE(mi_realloc_aligned, (void *p, size_t n, size_t a), p COMMA n COMMA a, do_realloc_aligned(p, n, a, 0, 0))
SIMPLE(mi_realloc_aligned_at, (void *p, size_t n, size_t a, size_t o), p COMMA n COMMA a COMMA o,
       do_realloc_aligned(p, n, a, o, 0))
SIMPLE(mi_rezalloc_aligned, (void *p, size_t n, size_t a), p COMMA n COMMA a, do_realloc_aligned(p, n, a, 0, 1))
SIMPLE(mi_rezalloc_aligned_at, (void *p, size_t n, size_t a, size_t o), p COMMA n COMMA a COMMA o,
       do_realloc_aligned(p, n, a, o, 1))

#define RECALLOC_ALIGNED(name, params, args, a, o) \
    COUNTED_FORM(name, params, p && !mine(p), do_realloc_aligned(p, t, a, o, 1), args)
RECALLOC_ALIGNED(mi_recalloc_aligned, (void *p, size_t c, size_t n, size_t a), p COMMA c COMMA n COMMA a, a, 0)
RECALLOC_ALIGNED(mi_recalloc_aligned_at, (void *p, size_t c, size_t n, size_t a, size_t o),
                 p COMMA c COMMA n COMMA a COMMA o, a, o)
RECALLOC_ALIGNED(mi_aligned_recalloc, (void *p, size_t c, size_t n, size_t a), p COMMA c COMMA n COMMA a, a, 0)
RECALLOC_ALIGNED(mi_aligned_offset_recalloc, (void *p, size_t c, size_t n, size_t a, size_t o),
                 p COMMA c COMMA n COMMA a COMMA o, a, o)
#undef RECALLOC_ALIGNED

/* realloc that, out of memory, goes the way of operator new (the new_handler, then
 * std::bad_alloc): the new block then comes from operator new and the data moves. */
static void *new_realloc(void *p, size_t n)
{
    void *q = do_realloc(p, n, 0);
    if (q)
        return q;
    q = hp_new(n, 0, 0);
    return p ? hp_mi_moved(p, q, n) : q;
}

void *hp_mi_new_realloc(const void *ra, void *p, size_t n)
{
    ENTRY(mi_new_realloc, p, n);
    if (p && !mine(p))
        return REAL(mi_new_realloc) ? hp_mi_real.mi_new_realloc(p, n) : NULL;
    return new_realloc(p, n);
}

void *hp_mi_new_reallocn(const void *ra, void *p, size_t c, size_t n)
{
    ENTRY(mi_new_reallocn, p, c, n);
    size_t t;
    if (mul_over(c, n, &t) || (p && !mine(p)))
        return REAL(mi_new_reallocn) ? hp_mi_real.mi_new_reallocn(p, c, n) : NULL;
    return new_realloc(p, t);
}

/* ---------- BSD names libmimalloc defines too ---------- */

/* reallocf frees the block when it cannot be resized (libbsd and libmimalloc alike). */
void *hp_reallocf(void *p, size_t n)
{
    void *q = hp_realloc(p, n);
    if (!q && p && n)
        hp_free(p);
    return q;
}

/* reallocarr resizes *pp in place of the pointer, answering an error number (NetBSD, libbsd);
 * libmimalloc's is its mi_reallocarr, which differs at size 0 (a block, not a free), so a
 * program that would reach libmimalloc's gets that one's answer. */
int hp_reallocarr(void *pp, size_t c, size_t n)
{
    /* (found, not REAL: no lookups on this path in a process without mimalloc) */
    if (__atomic_load_n(&hp_mi_found, __ATOMIC_ACQUIRE) && hp_mi_reallocarr_next && own())
        return do_reallocarr(pp, c, n);
    void **op = pp;
    size_t t;
    int saved = errno;
    if (mul_over(c, n, &t))
        return EOVERFLOW;
    if (t == 0) {
        hp_free(*op);
        *op = NULL;
        return 0;
    }
    void *q = hp_realloc(*op, t);
    if (!q) {
        int e = errno;
        errno = saved;
        return e ? e : ENOMEM;
    }
    *op = q;
    return 0;
}
