/* mimalloc's heap functions (mi_heap_*): the shim's blocks made inside the heap asked for when
 * mimalloc is the backend, and the frees mi_heap_destroy makes wholesale recorded. */
#include "core/mimalloc_internal.h"

#include <limits.h>
#include <stdlib.h>
#include <string.h>

/* Raw memory for hp_alloc_from: n bytes of heap h. */
static void *heap_get(void *h, size_t n, int zero)
{
    return zero ? hp_mi_real.mi_heap_zalloc(h, n) : hp_mi_real.mi_heap_malloc(h, n);
}

/* An aligned block in heap h: the shim's when mimalloc is the backend and the shim can place
 * it, else mimalloc's own answer (an alignment of 0 is an error there). */
static void *heap_aligned(mi_heap_t *h, size_t n, size_t a, size_t o, int zero)
{
    if (hp_mi_heap_here && valid(a, o))
        return hp_alloc_from(heap_get, h, n, a, o, zero);
    void *(*fn)(mi_heap_t *, size_t, size_t, size_t) =
        zero ? REAL(mi_heap_zalloc_aligned_at) : REAL(mi_heap_malloc_aligned_at);
    return fn ? fn(h, n, a, o) : NULL;
}

/* A block of n bytes in heap h (aligned when a or o is not 0). */
static void *heap_alloc(mi_heap_t *h, size_t n, size_t a, size_t o, int zero)
{
    if (a || o)
        return heap_aligned(h, n, a, o, zero);
    if (hp_mi_heap_here)
        return hp_alloc_from(heap_get, h, n, 0, 0, zero);
    void *(*fn)(mi_heap_t *, size_t) = zero ? REAL(mi_heap_zalloc) : REAL(mi_heap_malloc);
    return fn ? fn(h, n) : NULL;
}

SIMPLE(mi_heap_malloc, (mi_heap_t * h, size_t n), h COMMA n, heap_alloc(h, n, 0, 0, 0))
SIMPLE(mi_heap_zalloc, (mi_heap_t * h, size_t n), h COMMA n, heap_alloc(h, n, 0, 0, 1))
SIMPLE(mi_heap_malloc_small, (mi_heap_t * h, size_t n), h COMMA n, heap_alloc(h, n, 0, 0, 0))
SIMPLE(mi_heap_malloc_aligned, (mi_heap_t * h, size_t n, size_t a), h COMMA n COMMA a, heap_aligned(h, n, a, 0, 0))
SIMPLE(mi_heap_malloc_aligned_at, (mi_heap_t * h, size_t n, size_t a, size_t o), h COMMA n COMMA a COMMA o,
       heap_aligned(h, n, a, o, 0))
SIMPLE(mi_heap_zalloc_aligned, (mi_heap_t * h, size_t n, size_t a), h COMMA n COMMA a, heap_aligned(h, n, a, 0, 1))
SIMPLE(mi_heap_zalloc_aligned_at, (mi_heap_t * h, size_t n, size_t a, size_t o), h COMMA n COMMA a COMMA o,
       heap_aligned(h, n, a, o, 1))

/* count * size in a heap: an overflow, or an alignment the shim cannot give, is mimalloc's
 * to answer. */
#define HEAP_N(name, params, args, a, o, zero)                                              \
    COUNTED_FORM(name, params, !hp_mi_heap_here || (a && !valid(a, o)), heap_alloc(h, t, a, o, zero), \
                 args)
HEAP_N(mi_heap_calloc, (mi_heap_t * h, size_t c, size_t n), h COMMA c COMMA n, 0, 0, 1)
HEAP_N(mi_heap_mallocn, (mi_heap_t * h, size_t c, size_t n), h COMMA c COMMA n, 0, 0, 0)
HEAP_N(mi_heap_calloc_aligned, (mi_heap_t * h, size_t c, size_t n, size_t a), h COMMA c COMMA n COMMA a, a, 0, 1)
HEAP_N(mi_heap_calloc_aligned_at, (mi_heap_t * h, size_t c, size_t n, size_t a, size_t o),
       h COMMA c COMMA n COMMA a COMMA o, a, o, 1)
#undef HEAP_N

static void *heap_dup(mi_heap_t *h, const void *s, size_t len)
{
    char *p = heap_alloc(h, len + 1, 0, 0, 0);
    if (p) {
        memcpy(p, s, len);
        p[len] = 0;
    }
    return p;
}

char *hp_mi_heap_strdup(const void *ra, mi_heap_t *h, const char *s)
{
    ENTRY(mi_heap_strdup, h, s);
    if (!hp_mi_heap_here && REAL(mi_heap_strdup))
        return hp_mi_real.mi_heap_strdup(h, s);
    return s ? heap_dup(h, s, strlen(s)) : NULL;
}

char *hp_mi_heap_strndup(const void *ra, mi_heap_t *h, const char *s, size_t n)
{
    ENTRY(mi_heap_strndup, h, s, n);
    if (!hp_mi_heap_here && REAL(mi_heap_strndup))
        return hp_mi_real.mi_heap_strndup(h, s, n);
    return s ? heap_dup(h, s, strnlen(s, n)) : NULL;
}

char *hp_mi_heap_realpath(const void *ra, mi_heap_t *h, const char *name, char *resolved)
{
    ENTRY(mi_heap_realpath, h, name, resolved);
    if (!hp_mi_heap_here && REAL(mi_heap_realpath))
        return hp_mi_real.mi_heap_realpath(h, name, resolved);
    if (resolved)
        return realpath(name, resolved);
    char buf[PATH_MAX];
    if (!realpath(name, buf))
        return NULL;
    return heap_dup(h, buf, strlen(buf));
}

/* Reallocation in a heap: a block of the shim's moves to a new block in the heap (the shim's
 * or mimalloc's); mimalloc's own blocks stay mimalloc's business. */
#define HEAP_REALLOC(name, params, args, a, o, zero)                       \
    void *hp_##name(const void *ra, UNPAREN params)                        \
    {                                                                      \
        ENTRY(name, args);                                                 \
        if (!p)                                                            \
            return heap_alloc(h, n, a, o, zero);                           \
        if (!hp_owns(p))                                                   \
            return REAL(name) ? hp_mi_real.name(args) : NULL;              \
        return hp_mi_moved(p, heap_alloc(h, n, a, o, zero), n);            \
    }
HEAP_REALLOC(mi_heap_realloc, (mi_heap_t * h, void *p, size_t n), h COMMA p COMMA n, 0, 0, 0)
HEAP_REALLOC(mi_heap_rezalloc, (mi_heap_t * h, void *p, size_t n), h COMMA p COMMA n, 0, 0, 1)
HEAP_REALLOC(mi_heap_realloc_aligned, (mi_heap_t * h, void *p, size_t n, size_t a), h COMMA p COMMA n COMMA a, a, 0, 0)
HEAP_REALLOC(mi_heap_realloc_aligned_at, (mi_heap_t * h, void *p, size_t n, size_t a, size_t o),
             h COMMA p COMMA n COMMA a COMMA o, a, o, 0)
HEAP_REALLOC(mi_heap_rezalloc_aligned, (mi_heap_t * h, void *p, size_t n, size_t a), h COMMA p COMMA n COMMA a, a, 0, 1)
HEAP_REALLOC(mi_heap_rezalloc_aligned_at, (mi_heap_t * h, void *p, size_t n, size_t a, size_t o),
             h COMMA p COMMA n COMMA a COMMA o, a, o, 1)
#undef HEAP_REALLOC

#define HEAP_REALLOC_N(name, params, args, a, o, zero)                                        \
    COUNTED_FORM(name, params, p && !mine(p),                                                  \
                 p ? hp_mi_moved(p, heap_alloc(h, t, a, o, zero), t) : heap_alloc(h, t, a, o, zero), args)
HEAP_REALLOC_N(mi_heap_reallocn, (mi_heap_t * h, void *p, size_t c, size_t n), h COMMA p COMMA c COMMA n, 0, 0, 0)
HEAP_REALLOC_N(mi_heap_recalloc, (mi_heap_t * h, void *p, size_t c, size_t n), h COMMA p COMMA c COMMA n, 0, 0, 1)
HEAP_REALLOC_N(mi_heap_recalloc_aligned, (mi_heap_t * h, void *p, size_t c, size_t n, size_t a),
               h COMMA p COMMA c COMMA n COMMA a, a, 0, 1)
HEAP_REALLOC_N(mi_heap_recalloc_aligned_at, (mi_heap_t * h, void *p, size_t c, size_t n, size_t a, size_t o),
               h COMMA p COMMA c COMMA n COMMA a COMMA o, a, o, 1)
#undef HEAP_REALLOC_N

void *hp_mi_heap_reallocf(const void *ra, mi_heap_t *h, void *p, size_t n)
{
    ENTRY(mi_heap_reallocf, h, p, n);
    if (p && !mine(p))
        return REAL(mi_heap_reallocf) ? hp_mi_real.mi_heap_reallocf(h, p, n) : NULL;
    if (!p)
        return heap_alloc(h, n, 0, 0, 0);
    void *q = hp_mi_moved(p, heap_alloc(h, n, 0, 0, 0), n);
    if (!q)
        hp_free(p);
    return q;
}

void *hp_mi_heap_alloc_new(const void *ra, mi_heap_t *h, size_t n)
{
    ENTRY(mi_heap_alloc_new, h, n);
    void *p = heap_alloc(h, n, 0, 0, 0);
    return p ? p : hp_new(n, 0, 0); /* out of memory: operator new's way (new_handler, bad_alloc) */
}

void *hp_mi_heap_alloc_new_n(const void *ra, mi_heap_t *h, size_t c, size_t n)
{
    ENTRY(mi_heap_alloc_new_n, h, c, n);
    size_t t;
    if (mul_over(c, n, &t))
        return REAL(mi_heap_alloc_new_n) ? hp_mi_real.mi_heap_alloc_new_n(h, c, n) : hp_new(SIZE_MAX, 0, 0);
    void *p = heap_alloc(h, t, 0, 0, 0);
    return p ? p : hp_new(t, 0, 0);
}

static bool forget_visit(const mi_heap_t *h, const void *area, void *block, size_t size, void *arg)
{
    (void)h, (void)area, (void)arg;
    if (block)
        hp_forget_block(block, size);
    return true;
}

/* mi_heap_destroy frees every block still in the heap at once: the shim's among them are
 * recorded as freed first. (mimalloc deletes instead of destroying the backing heap, whose
 * blocks then live on: those are left alone.) */
void hp_mi_heap_destroy(const void *ra, mi_heap_t *h)
{
    ENTRY(mi_heap_destroy, h);
    if (hp_mi_heap_here && h && REAL(mi_heap_visit_blocks) &&
        (!REAL(mi_heap_get_backing) || h != hp_mi_real.mi_heap_get_backing()))
        hp_mi_real.mi_heap_visit_blocks(h, true, forget_visit, NULL);
    if (REAL(mi_heap_destroy))
        hp_mi_real.mi_heap_destroy(h);
}
