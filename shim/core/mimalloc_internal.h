/* What core/'s mimalloc_*.c files share: mimalloc's functions as found in the process, and the
 * checks every hp_mi_* function opens with. Included by core/mimalloc_*.c only.
 *
 * mimalloc's own API (mimalloc.h: mi_malloc, mi_free, mi_realloc, mi_heap_malloc, ...), for
 * programs written against it: what interpose/mimalloc.c's entry points forward to, hp_<name>
 * for mimalloc's <name>. libmimalloc also overrides malloc, and such a program may give
 * a block malloc made to mi_free, mi_realloc or mi_usable_size: the shim made that block, and
 * mimalloc handed a pointer into the middle of one of its blocks corrupts its free lists (a
 * crash at the next allocation). So every mi_* function that takes a block comes to the shim,
 * and so do the allocation functions, whose blocks are then profiled like malloc's.
 *
 * - A block the shim did not make goes to mimalloc's function of the same name.
 * - Heaps (mi_heap_*): when mimalloc is the shim's backend, the shim's blocks are made in the
 *   heap asked for, and mi_heap_destroy, which frees a heap's blocks wholesale, first records
 *   the frees of the shim's blocks still in it. With another backend the heap allocations are
 *   mimalloc's own, unprofiled (their blocks must go back to mimalloc, which the shim's free
 *   would not do).
 * - What the shim's header cannot hold goes to mimalloc unprofiled, and so does every call
 *   that fails by its arguments, so that mimalloc answers as it does alone (its error handler
 *   included): an alignment that is 0, not a power of two or over HP_MI_ALIGN_MAX, an offset
 *   (the _at forms) that is not a multiple of 32, a count * size that overflows.
 * - When the shim only forwards (hp_passthrough) every call goes to mimalloc.
 * Without mimalloc in the process the functions still work, on the shim's blocks.
 *
 * The files: mimalloc_lookup.c finds mimalloc's functions; mimalloc_alloc.c makes blocks
 * without a heap or an alignment (the C++ forms included), mimalloc_aligned.c aligned ones
 * (the _at offsets); mimalloc_free.c frees and sizes them, mimalloc_realloc.c resizes them
 * (and the BSD names libmimalloc defines too); mimalloc_heap.c is the mi_heap_* functions;
 * mimalloc_callbacks.c runs the program's functions mimalloc calls (heap visitors, deferred
 * free, error handler). The hp_mi_* functions never call each other: see ENTRY. */
#ifndef HP_MIMALLOC_INTERNAL_H
#define HP_MIMALLOC_INTERNAL_H

#include "core/core.h"
#include "core/core_internal.h"
#include "core/header_internal.h"
#include "rt/rt.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define COMMA ,
/* A parameter list without its parentheses, for the macros that put ra in front of it. */
#define UNPAREN(...) __VA_ARGS__

/* Larger alignments go to mimalloc (which refuses those over half a segment). */
#define HP_MI_ALIGN_MAX ((size_t)1 << 20)

/* mimalloc's functions: name, result, parameters. */
#define MI_FUNCS(X)                                                                               \
    X(mi_malloc, void *, (size_t))                                                                \
    X(mi_calloc, void *, (size_t, size_t))                                                        \
    X(mi_zalloc, void *, (size_t))                                                                \
    X(mi_malloc_small, void *, (size_t))                                                          \
    X(mi_zalloc_small, void *, (size_t))                                                          \
    X(mi_mallocn, void *, (size_t, size_t))                                                       \
    X(mi_strdup, char *, (const char *))                                                          \
    X(mi_strndup, char *, (const char *, size_t))                                                 \
    X(mi_realpath, char *, (const char *, char *))                                                \
    X(mi_mbsdup, unsigned char *, (const unsigned char *))                                        \
    X(mi_wcsdup, unsigned short *, (const unsigned short *))                                      \
    X(mi_malloc_aligned, void *, (size_t, size_t))                                                \
    X(mi_malloc_aligned_at, void *, (size_t, size_t, size_t))                                     \
    X(mi_zalloc_aligned, void *, (size_t, size_t))                                                \
    X(mi_zalloc_aligned_at, void *, (size_t, size_t, size_t))                                     \
    X(mi_calloc_aligned, void *, (size_t, size_t, size_t))                                        \
    X(mi_calloc_aligned_at, void *, (size_t, size_t, size_t, size_t))                             \
    X(mi_memalign, void *, (size_t, size_t))                                                      \
    X(mi_posix_memalign, int, (void **, size_t, size_t))                                          \
    X(mi_aligned_alloc, void *, (size_t, size_t))                                                 \
    X(mi_valloc, void *, (size_t))                                                                \
    X(mi_pvalloc, void *, (size_t))                                                               \
    X(mi_realloc, void *, (void *, size_t))                                                       \
    X(mi_expand, void *, (void *, size_t))                                                        \
    X(mi__expand, void *, (void *, size_t))                                                       \
    X(mi_reallocn, void *, (void *, size_t, size_t))                                              \
    X(mi_reallocf, void *, (void *, size_t))                                                      \
    X(mi_reallocarray, void *, (void *, size_t, size_t))                                          \
    X(mi_reallocarr, int, (void *, size_t, size_t))                                               \
    X(mi_rezalloc, void *, (void *, size_t))                                                      \
    X(mi_recalloc, void *, (void *, size_t, size_t))                                              \
    X(mi_realloc_aligned, void *, (void *, size_t, size_t))                                       \
    X(mi_realloc_aligned_at, void *, (void *, size_t, size_t, size_t))                            \
    X(mi_rezalloc_aligned, void *, (void *, size_t, size_t))                                      \
    X(mi_rezalloc_aligned_at, void *, (void *, size_t, size_t, size_t))                           \
    X(mi_recalloc_aligned, void *, (void *, size_t, size_t, size_t))                              \
    X(mi_recalloc_aligned_at, void *, (void *, size_t, size_t, size_t, size_t))                   \
    X(mi_aligned_recalloc, void *, (void *, size_t, size_t, size_t))                              \
    X(mi_aligned_offset_recalloc, void *, (void *, size_t, size_t, size_t, size_t))               \
    X(mi_free, void, (void *))                                                                    \
    X(mi_cfree, void, (void *))                                                                   \
    X(mi_free_size, void, (void *, size_t))                                                       \
    X(mi_free_aligned, void, (void *, size_t))                                                    \
    X(mi_free_size_aligned, void, (void *, size_t, size_t))                                       \
    X(mi_usable_size, size_t, (const void *))                                                     \
    X(mi_malloc_size, size_t, (const void *))                                                     \
    X(mi_malloc_usable_size, size_t, (const void *))                                              \
    X(mi_new, void *, (size_t))                                                                   \
    X(mi_new_aligned, void *, (size_t, size_t))                                                   \
    X(mi_new_nothrow, void *, (size_t))                                                           \
    X(mi_new_aligned_nothrow, void *, (size_t, size_t))                                           \
    X(mi_new_n, void *, (size_t, size_t))                                                         \
    X(mi_new_realloc, void *, (void *, size_t))                                                   \
    X(mi_new_reallocn, void *, (void *, size_t, size_t))                                          \
    X(mi_heap_malloc, void *, (mi_heap_t *, size_t))                                              \
    X(mi_heap_zalloc, void *, (mi_heap_t *, size_t))                                              \
    X(mi_heap_calloc, void *, (mi_heap_t *, size_t, size_t))                                      \
    X(mi_heap_mallocn, void *, (mi_heap_t *, size_t, size_t))                                     \
    X(mi_heap_malloc_small, void *, (mi_heap_t *, size_t))                                        \
    X(mi_heap_strdup, char *, (mi_heap_t *, const char *))                                        \
    X(mi_heap_strndup, char *, (mi_heap_t *, const char *, size_t))                               \
    X(mi_heap_realpath, char *, (mi_heap_t *, const char *, char *))                              \
    X(mi_heap_malloc_aligned, void *, (mi_heap_t *, size_t, size_t))                              \
    X(mi_heap_malloc_aligned_at, void *, (mi_heap_t *, size_t, size_t, size_t))                   \
    X(mi_heap_zalloc_aligned, void *, (mi_heap_t *, size_t, size_t))                              \
    X(mi_heap_zalloc_aligned_at, void *, (mi_heap_t *, size_t, size_t, size_t))                   \
    X(mi_heap_calloc_aligned, void *, (mi_heap_t *, size_t, size_t, size_t))                      \
    X(mi_heap_calloc_aligned_at, void *, (mi_heap_t *, size_t, size_t, size_t, size_t))           \
    X(mi_heap_realloc, void *, (mi_heap_t *, void *, size_t))                                     \
    X(mi_heap_reallocn, void *, (mi_heap_t *, void *, size_t, size_t))                            \
    X(mi_heap_reallocf, void *, (mi_heap_t *, void *, size_t))                                    \
    X(mi_heap_rezalloc, void *, (mi_heap_t *, void *, size_t))                                    \
    X(mi_heap_recalloc, void *, (mi_heap_t *, void *, size_t, size_t))                            \
    X(mi_heap_realloc_aligned, void *, (mi_heap_t *, void *, size_t, size_t))                     \
    X(mi_heap_realloc_aligned_at, void *, (mi_heap_t *, void *, size_t, size_t, size_t))          \
    X(mi_heap_rezalloc_aligned, void *, (mi_heap_t *, void *, size_t, size_t))                    \
    X(mi_heap_rezalloc_aligned_at, void *, (mi_heap_t *, void *, size_t, size_t, size_t))         \
    X(mi_heap_recalloc_aligned, void *, (mi_heap_t *, void *, size_t, size_t, size_t))            \
    X(mi_heap_recalloc_aligned_at, void *, (mi_heap_t *, void *, size_t, size_t, size_t, size_t)) \
    X(mi_heap_alloc_new, void *, (mi_heap_t *, size_t))                                           \
    X(mi_heap_alloc_new_n, void *, (mi_heap_t *, size_t, size_t))                                 \
    X(mi_heap_destroy, void, (mi_heap_t *))                                                       \
    X(mi_heap_get_backing, mi_heap_t *, (void))                                                   \
    X(mi_heap_visit_blocks, bool, (const mi_heap_t *, bool, mi_visit_fn *, void *))               \
    X(mi_register_deferred_free, void, (mi_deferred_fn *, void *))                                \
    X(mi_register_error, void, (mi_error_fn *, void *))

/* mimalloc's own definitions (backend/backend.h hp_backend_next), NULL when it has none
 * (mimalloc_lookup.c). */
extern struct hp_mi_real {
#define X(name, ret, params) ret(*name) params;
    MI_FUNCS(X)
#undef X
} hp_mi_real;

extern int hp_mi_found;           /* mimalloc's functions were looked up and mi_malloc found */
extern int hp_mi_heap_here;       /* mimalloc is the backend: its heaps can hold the shim's blocks */
extern int hp_mi_reallocarr_next; /* the reallocarr the program would reach is libmimalloc's */
/* Code whose calls of mi_* functions are mimalloc's own business: mimalloc itself, which
 * calls its exported functions through its PLT (memalign calls mi_memalign, mi_heap_new
 * allocates the heap with mi_heap_malloc, realloc calls mi_heap_realloc), and the shim, whose
 * calls into mimalloc's entry points arrive here when those tail-call others. */
extern uintptr_t hp_mi_lo, hp_mi_hi, hp_mi_self_lo, hp_mi_self_hi;

/* A library loaded after init may have brought mimalloc: looked up again on the rare paths
 * that need it. */
void hp_mi_retry(void);

/* mimalloc's function of that name, NULL if there is none. */
#define REAL(name) \
    (__atomic_load_n(&hp_mi_found, __ATOMIC_ACQUIRE) ? hp_mi_real.name : (hp_mi_retry(), hp_mi_real.name))

/* The shim makes the blocks (not while it only forwards). */
static inline int own(void) { return hp_ready() && !hp_passthrough; }

static inline int inner(const void *ra)
{
    uintptr_t a = (uintptr_t)ra;
    return (a - hp_mi_lo < hp_mi_hi - hp_mi_lo) || (a - hp_mi_self_lo < hp_mi_self_hi - hp_mi_self_lo);
}

/* At the top of every hp_mi_* function: mimalloc answers calls from mimalloc and the shim (ra:
 * the entry point's return address, HP_CALLER), and all of them while the shim only forwards.
 * (When mimalloc is absent the shim answers.) */
#define ENTRY(name, ...)                                                                 \
    do {                                                                                 \
        if (HP_UNLIKELY(!own() || inner(ra)) && REAL(name))                              \
            return hp_mi_real.name(__VA_ARGS__);                                         \
    } while (0)

/* A function whose whole work is one expression (args: its parameters, COMMA-separated). */
#define SIMPLE(name, params, args, expr)            \
    void *hp_##name(const void *ra, UNPAREN params) \
    {                                               \
        ENTRY(name, args);                          \
        return expr;                                \
    }

static inline int mul_over(size_t a, size_t b, size_t *r) { return __builtin_mul_overflow(a, b, r); }

/* A count * size form (parameters c and n among params; the function's arguments last): an
 * overflow is mimalloc's to answer (its error handler), and so is what refuse says the shim
 * cannot serve; otherwise expr, with t the product. */
#define COUNTED_FORM(name, params, refuse, expr, ...)                \
    void *hp_##name(const void *ra, UNPAREN params)                  \
    {                                                                \
        ENTRY(name, __VA_ARGS__);                                    \
        size_t t;                                                    \
        if (mul_over(c, n, &t) || (refuse))                          \
            return REAL(name) ? hp_mi_real.name(__VA_ARGS__) : NULL; \
        return expr;                                                 \
    }

/* Can the shim's header serve alignment a (0: none asked) at offset o? */
static inline int placeable(size_t a, size_t o)
{
    return (a == 0 || (hp_is_pow2(a) && a <= HP_MI_ALIGN_MAX)) && (o & (HP_MIN_ALIGN - 1)) == 0;
}

/* The same for the aligned functions, where an alignment of 0 is an error. */
static inline int valid(size_t a, size_t o) { return a && placeable(a, o); }

/* Is p a block of the shim's (NULL is not)? */
static inline int mine(const void *p) { return p && hp_owns((void *)p); }

/* What mi_malloc_aligned_at and mi_zalloc_aligned_at give: the shim's block, or mimalloc's
 * answer to what the shim cannot place (mimalloc_aligned.c). */
void *hp_mi_aligned_at(size_t n, size_t a, size_t o, int zero);
/* The block p (the shim's) moved into a new block q of n bytes (NULL: failed, p stays)
 * (mimalloc_realloc.c). */
void *hp_mi_moved(void *p, void *q, size_t n);

#endif
