/* mimalloc's own API (mimalloc.h: mi_malloc, mi_free, mi_realloc, mi_heap_malloc, ...), for
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
 * Without mimalloc in the process the functions still work, on the shim's blocks. */
#include "core/core.h"
#include "core/core_internal.h"
#include "backend/backend.h"
#include "core/header_internal.h"
#include "rt/rt.h"

#include <errno.h>
#include <limits.h>
#include <link.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#define COMMA ,
/* A parameter list without its parentheses, for the macros that put ra in front of it. */
#define UNPAREN(...) __VA_ARGS__

/* Larger alignments go to mimalloc (which refuses those over half a segment). */
#define HP_MI_ALIGN_MAX ((size_t)1 << 20)

/* mimalloc's functions: name, result, parameters. */
#define MI_FUNCS(X)                                                                           \
    X(mi_malloc, void *, (size_t))                                                            \
    X(mi_calloc, void *, (size_t, size_t))                                                    \
    X(mi_zalloc, void *, (size_t))                                                            \
    X(mi_malloc_small, void *, (size_t))                                                      \
    X(mi_zalloc_small, void *, (size_t))                                                      \
    X(mi_mallocn, void *, (size_t, size_t))                                                   \
    X(mi_strdup, char *, (const char *))                                                      \
    X(mi_strndup, char *, (const char *, size_t))                                             \
    X(mi_realpath, char *, (const char *, char *))                                            \
    X(mi_mbsdup, unsigned char *, (const unsigned char *))                                    \
    X(mi_wcsdup, unsigned short *, (const unsigned short *))                                  \
    X(mi_malloc_aligned, void *, (size_t, size_t))                                            \
    X(mi_malloc_aligned_at, void *, (size_t, size_t, size_t))                                 \
    X(mi_zalloc_aligned, void *, (size_t, size_t))                                            \
    X(mi_zalloc_aligned_at, void *, (size_t, size_t, size_t))                                 \
    X(mi_calloc_aligned, void *, (size_t, size_t, size_t))                                    \
    X(mi_calloc_aligned_at, void *, (size_t, size_t, size_t, size_t))                         \
    X(mi_memalign, void *, (size_t, size_t))                                                  \
    X(mi_posix_memalign, int, (void **, size_t, size_t))                                      \
    X(mi_aligned_alloc, void *, (size_t, size_t))                                             \
    X(mi_valloc, void *, (size_t))                                                            \
    X(mi_pvalloc, void *, (size_t))                                                           \
    X(mi_realloc, void *, (void *, size_t))                                                   \
    X(mi_expand, void *, (void *, size_t))                                                    \
    X(mi__expand, void *, (void *, size_t))                                                   \
    X(mi_reallocn, void *, (void *, size_t, size_t))                                          \
    X(mi_reallocf, void *, (void *, size_t))                                                  \
    X(mi_reallocarray, void *, (void *, size_t, size_t))                                      \
    X(mi_reallocarr, int, (void *, size_t, size_t))                                           \
    X(mi_rezalloc, void *, (void *, size_t))                                                  \
    X(mi_recalloc, void *, (void *, size_t, size_t))                                          \
    X(mi_realloc_aligned, void *, (void *, size_t, size_t))                                   \
    X(mi_realloc_aligned_at, void *, (void *, size_t, size_t, size_t))                        \
    X(mi_rezalloc_aligned, void *, (void *, size_t, size_t))                                  \
    X(mi_rezalloc_aligned_at, void *, (void *, size_t, size_t, size_t))                       \
    X(mi_recalloc_aligned, void *, (void *, size_t, size_t, size_t))                          \
    X(mi_recalloc_aligned_at, void *, (void *, size_t, size_t, size_t, size_t))               \
    X(mi_aligned_recalloc, void *, (void *, size_t, size_t, size_t))                          \
    X(mi_aligned_offset_recalloc, void *, (void *, size_t, size_t, size_t, size_t))           \
    X(mi_free, void, (void *))                                                                \
    X(mi_cfree, void, (void *))                                                               \
    X(mi_free_size, void, (void *, size_t))                                                   \
    X(mi_free_aligned, void, (void *, size_t))                                                \
    X(mi_free_size_aligned, void, (void *, size_t, size_t))                                   \
    X(mi_usable_size, size_t, (const void *))                                                 \
    X(mi_malloc_size, size_t, (const void *))                                                 \
    X(mi_malloc_usable_size, size_t, (const void *))                                          \
    X(mi_new, void *, (size_t))                                                               \
    X(mi_new_aligned, void *, (size_t, size_t))                                               \
    X(mi_new_nothrow, void *, (size_t))                                                       \
    X(mi_new_aligned_nothrow, void *, (size_t, size_t))                                       \
    X(mi_new_n, void *, (size_t, size_t))                                                     \
    X(mi_new_realloc, void *, (void *, size_t))                                               \
    X(mi_new_reallocn, void *, (void *, size_t, size_t))                                      \
    X(mi_heap_malloc, void *, (mi_heap_t *, size_t))                                          \
    X(mi_heap_zalloc, void *, (mi_heap_t *, size_t))                                          \
    X(mi_heap_calloc, void *, (mi_heap_t *, size_t, size_t))                                  \
    X(mi_heap_mallocn, void *, (mi_heap_t *, size_t, size_t))                                 \
    X(mi_heap_malloc_small, void *, (mi_heap_t *, size_t))                                    \
    X(mi_heap_strdup, char *, (mi_heap_t *, const char *))                                    \
    X(mi_heap_strndup, char *, (mi_heap_t *, const char *, size_t))                           \
    X(mi_heap_realpath, char *, (mi_heap_t *, const char *, char *))                          \
    X(mi_heap_malloc_aligned, void *, (mi_heap_t *, size_t, size_t))                          \
    X(mi_heap_malloc_aligned_at, void *, (mi_heap_t *, size_t, size_t, size_t))               \
    X(mi_heap_zalloc_aligned, void *, (mi_heap_t *, size_t, size_t))                          \
    X(mi_heap_zalloc_aligned_at, void *, (mi_heap_t *, size_t, size_t, size_t))               \
    X(mi_heap_calloc_aligned, void *, (mi_heap_t *, size_t, size_t, size_t))                  \
    X(mi_heap_calloc_aligned_at, void *, (mi_heap_t *, size_t, size_t, size_t, size_t))       \
    X(mi_heap_realloc, void *, (mi_heap_t *, void *, size_t))                                 \
    X(mi_heap_reallocn, void *, (mi_heap_t *, void *, size_t, size_t))                        \
    X(mi_heap_reallocf, void *, (mi_heap_t *, void *, size_t))                                \
    X(mi_heap_rezalloc, void *, (mi_heap_t *, void *, size_t))                                \
    X(mi_heap_recalloc, void *, (mi_heap_t *, void *, size_t, size_t))                        \
    X(mi_heap_realloc_aligned, void *, (mi_heap_t *, void *, size_t, size_t))                 \
    X(mi_heap_realloc_aligned_at, void *, (mi_heap_t *, void *, size_t, size_t, size_t))      \
    X(mi_heap_rezalloc_aligned, void *, (mi_heap_t *, void *, size_t, size_t))                \
    X(mi_heap_rezalloc_aligned_at, void *, (mi_heap_t *, void *, size_t, size_t, size_t))     \
    X(mi_heap_recalloc_aligned, void *, (mi_heap_t *, void *, size_t, size_t, size_t))        \
    X(mi_heap_recalloc_aligned_at, void *, (mi_heap_t *, void *, size_t, size_t, size_t, size_t)) \
    X(mi_heap_alloc_new, void *, (mi_heap_t *, size_t))                                       \
    X(mi_heap_alloc_new_n, void *, (mi_heap_t *, size_t, size_t))                             \
    X(mi_heap_destroy, void, (mi_heap_t *))                                                   \
    X(mi_heap_get_backing, mi_heap_t *, (void))                                               \
    X(mi_heap_visit_blocks, bool, (const mi_heap_t *, bool, mi_visit_fn *, void *))           \
    X(mi_register_deferred_free, void, (mi_deferred_fn *, void *))                            \
    X(mi_register_error, void, (mi_error_fn *, void *))

/* mimalloc's own definitions (backend/backend.h hp_backend_next), NULL when it has none. */
static struct {
#define X(name, ret, params) ret(*name) params;
    MI_FUNCS(X)
#undef X
} real;

static int found;             /* mimalloc's functions were looked up and mi_malloc found */
static int heap_here;         /* mimalloc is the backend: its heaps can hold the shim's blocks */
static int mi_reallocarr_next; /* the reallocarr the program would reach is libmimalloc's */
/* Code whose calls of mi_* functions are mimalloc's own business: mimalloc itself, which
 * calls its exported functions through its PLT (memalign calls mi_memalign, mi_heap_new
 * allocates the heap with mi_heap_malloc, realloc calls mi_heap_realloc), and the shim, whose
 * calls into mimalloc's entry points arrive here when those tail-call others. */
static uintptr_t mi_lo, mi_hi, self_lo, self_hi;

static void object_range(const void *fn, uintptr_t *lo, uintptr_t *hi)
{
    struct dl_find_object fo;
    if (fn && _dl_find_object((void *)fn, &fo) == 0) {
        *lo = (uintptr_t)fo.dlfo_map_start;
        *hi = (uintptr_t)fo.dlfo_map_end;
    }
}

static void resolve(void)
{
    const void *where = NULL;
    if (!hp_backend_next("mi_malloc", &where))
        return;
    object_range(where, &mi_lo, &mi_hi);
    object_range((const void *)resolve, &self_lo, &self_hi);
#define X(name, ret, params) *(void **)&real.name = hp_backend_next(#name, NULL);
    MI_FUNCS(X)
#undef X
    const void *ra = NULL;
    hp_backend_next("reallocarr", &ra);
    mi_reallocarr_next = ra && (uintptr_t)ra - mi_lo < mi_hi - mi_lo;
    hp_backend_next("mi_heap_malloc", &where);
    heap_here = where && hp_be.base && hp_object_start(where) == hp_be.base && real.mi_heap_malloc &&
                real.mi_heap_zalloc;
    /* With mimalloc in the process, blocks it made itself (see the top) reach free() too. */
    __atomic_store_n(&hp_foreign_expected, 1, __ATOMIC_RELAXED);
    __atomic_store_n(&found, 1, __ATOMIC_RELEASE);
}

void hp_mi_init(void) { resolve(); }

/* A library loaded after init may have brought mimalloc: looked up again on the rare paths
 * that need it. */
static void retry(void)
{
    if (__atomic_load_n(&hp_init_state, __ATOMIC_ACQUIRE) == HP_INIT_DONE)
        resolve();
}

/* mimalloc's function of that name, NULL if there is none. */
#define REAL(name) (__atomic_load_n(&found, __ATOMIC_ACQUIRE) ? real.name : (retry(), real.name))

/* The shim makes the blocks (not while it only forwards). */
static inline int own(void) { return hp_ready() && !hp_passthrough; }

static inline int inner(const void *ra)
{
    uintptr_t a = (uintptr_t)ra;
    return (a - mi_lo < mi_hi - mi_lo) || (a - self_lo < self_hi - self_lo);
}

/* At the top of every function here: mimalloc answers calls from mimalloc and the shim (ra:
 * the entry point's return address, HP_CALLER), and all of them while the shim only forwards.
 * (When mimalloc is absent the shim answers.) */
#define ENTRY(name, ...)                                                                 \
    do {                                                                                 \
        if (HP_UNLIKELY(!own() || inner(ra)) && REAL(name))                              \
            return real.name(__VA_ARGS__);                                               \
    } while (0)

/* A function whose whole work is one expression (args: its parameters, COMMA-separated). */
#define SIMPLE(name, params, args, expr)            \
    void *hp_##name(const void *ra, UNPAREN params) \
    {                                               \
        ENTRY(name, args);                          \
        return expr;                                \
    }

static inline int mul_over(size_t a, size_t b, size_t *r) { return __builtin_mul_overflow(a, b, r); }

/* Can the shim's header serve alignment a (0: none asked) at offset o? */
static int placeable(size_t a, size_t o)
{
    return (a == 0 || (hp_is_pow2(a) && a <= HP_MI_ALIGN_MAX)) && (o & (HP_MIN_ALIGN - 1)) == 0;
}

/* The same for the aligned functions, where an alignment of 0 is an error. */
static int valid(size_t a, size_t o) { return a && placeable(a, o); }

/* Is p a block of the shim's (NULL is not)? */
static inline int mine(const void *p) { return p && hp_owns((void *)p); }

/* ---------- helpers (the hp_mi_* functions never call each other: see ENTRY) ---------- */

/* A block of the shim's aligned at offset (placeable(a, o) holds). */
static void *aligned_block(size_t n, size_t a, size_t o, int zero)
{
    if (o == 0)
        return hp_alloc(n, a > 16 ? a : 0, zero);
    return hp_alloc_from(NULL, NULL, n, a, o, zero);
}

/* What mi_malloc_aligned_at and mi_zalloc_aligned_at give: the shim's block, or mimalloc's
 * answer to what the shim cannot place. */
static void *aligned_at(size_t n, size_t a, size_t o, int zero)
{
    if (valid(a, o))
        return aligned_block(n, a, o, zero);
    void *(*fn)(size_t, size_t, size_t) = zero ? REAL(mi_zalloc_aligned_at) : REAL(mi_malloc_aligned_at);
    return fn ? fn(n, a, o) : NULL;
}

/* The block p (the shim's) moved into a new block q of n bytes (NULL: failed, p stays). */
static void *moved(void *p, void *q, size_t n)
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
        return aligned_at(n, a, o, zero);
    if (!hp_owns(p)) {
        void *(*fn)(void *, size_t, size_t, size_t) =
            zero ? REAL(mi_rezalloc_aligned_at) : REAL(mi_realloc_aligned_at);
        return fn ? fn(p, n, a, o) : NULL;
    }
    if (a <= HP_MIN_ALIGN && (o & (HP_MIN_ALIGN - 1)) == 0 && (a == 0 || hp_is_pow2(a)))
        return do_realloc(p, n, zero);
    return moved(p, aligned_at(n, a, o, zero), n);
}

/* A copy of the len bytes at s followed by a terminating zero of zlen bytes. */
static void *dup_bytes(const void *s, size_t len, size_t zlen)
{
    char *p = hp_alloc(len + zlen, 0, 0);
    if (p) {
        memcpy(p, s, len);
        memset(p + len, 0, zlen);
    }
    return p;
}

/* ---------- blocks without a heap ---------- */

SIMPLE(mi_malloc, (size_t n), n, hp_alloc(n, 0, 0))

SIMPLE(mi_malloc_small, (size_t n), n, hp_alloc(n, 0, 0))

SIMPLE(mi_zalloc, (size_t n), n, hp_alloc(n, 0, 1))

SIMPLE(mi_zalloc_small, (size_t n), n, hp_alloc(n, 0, 1))

/* The count * size forms: an overflow is mimalloc's to answer (its error handler). */
#define COUNTED(name, zero)                             \
    void *hp_##name(const void *ra, size_t c, size_t n) \
    {                                                   \
        ENTRY(name, c, n);                              \
        size_t t;                                       \
        if (mul_over(c, n, &t))                         \
            return REAL(name) ? real.name(c, n) : NULL; \
        return hp_alloc(t, 0, zero);                    \
    }
COUNTED(mi_calloc, 1)
COUNTED(mi_mallocn, 0)
#undef COUNTED

char *hp_mi_strdup(const void *ra, const char *s)
{
    ENTRY(mi_strdup, s);
    return s ? dup_bytes(s, strlen(s), 1) : NULL;
}

char *hp_mi_strndup(const void *ra, const char *s, size_t n)
{
    ENTRY(mi_strndup, s, n);
    return s ? dup_bytes(s, strnlen(s, n), 1) : NULL;
}

unsigned char *hp_mi_mbsdup(const void *ra, const unsigned char *s)
{
    ENTRY(mi_mbsdup, s);
    return s ? dup_bytes(s, strlen((const char *)s), 1) : NULL;
}

unsigned short *hp_mi_wcsdup(const void *ra, const unsigned short *s)
{
    ENTRY(mi_wcsdup, s);
    if (!s)
        return NULL;
    size_t len = 0;
    while (s[len])
        len++;
    return dup_bytes(s, len * sizeof *s, sizeof *s);
}

char *hp_mi_realpath(const void *ra, const char *name, char *resolved)
{
    ENTRY(mi_realpath, name, resolved);
    if (resolved)
        return realpath(name, resolved);
    char buf[PATH_MAX];
    if (!realpath(name, buf))
        return NULL;
    return dup_bytes(buf, strlen(buf), 1);
}

SIMPLE(mi_malloc_aligned, (size_t n, size_t a), n COMMA a, aligned_at(n, a, 0, 0))

SIMPLE(mi_malloc_aligned_at, (size_t n, size_t a, size_t o), n COMMA a COMMA o, aligned_at(n, a, o, 0))

SIMPLE(mi_zalloc_aligned, (size_t n, size_t a), n COMMA a, aligned_at(n, a, 0, 1))

SIMPLE(mi_zalloc_aligned_at, (size_t n, size_t a, size_t o), n COMMA a COMMA o, aligned_at(n, a, o, 1))

void *hp_mi_calloc_aligned(const void *ra, size_t c, size_t n, size_t a)
{
    ENTRY(mi_calloc_aligned, c, n, a);
    size_t t;
    if (mul_over(c, n, &t) || !valid(a, 0))
        return REAL(mi_calloc_aligned) ? real.mi_calloc_aligned(c, n, a) : NULL;
    return aligned_block(t, a, 0, 1);
}

void *hp_mi_calloc_aligned_at(const void *ra, size_t c, size_t n, size_t a, size_t o)
{
    ENTRY(mi_calloc_aligned_at, c, n, a, o);
    size_t t;
    if (mul_over(c, n, &t) || !valid(a, o))
        return REAL(mi_calloc_aligned_at) ? real.mi_calloc_aligned_at(c, n, a, o) : NULL;
    return aligned_block(t, a, o, 1);
}

/* memalign, posix_memalign, aligned_alloc: alignments mimalloc refuses are its to refuse. */
void *hp_mi_memalign(const void *ra, size_t a, size_t n)
{
    ENTRY(mi_memalign, a, n);
    if (!valid(a, 0))
        return REAL(mi_memalign) ? real.mi_memalign(a, n) : NULL;
    return aligned_block(n, a, 0, 0);
}

void *hp_mi_aligned_alloc(const void *ra, size_t a, size_t n)
{
    ENTRY(mi_aligned_alloc, a, n);
    if (!valid(a, 0))
        return REAL(mi_aligned_alloc) ? real.mi_aligned_alloc(a, n) : NULL;
    return aligned_block(n, a, 0, 0);
}

int hp_mi_posix_memalign(const void *ra, void **out, size_t a, size_t n)
{
    ENTRY(mi_posix_memalign, out, a, n);
    if (!out || a % sizeof(void *) != 0 || !valid(a, 0))
        return REAL(mi_posix_memalign) ? real.mi_posix_memalign(out, a, n) : EINVAL;
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

/* ---------- freeing and sizes ---------- */

/* The shim's block through the shim, any other through mimalloc's function of the name the
 * program called (which may check more). */
#define FREE_FN(name, params, ...)                  \
    void hp_##name(const void *ra, UNPAREN params)  \
    {                                               \
        ENTRY(name, p, ##__VA_ARGS__);              \
        if (hp_free_own(p))                         \
            return;                                 \
        if (REAL(name))                             \
            real.name(p, ##__VA_ARGS__);            \
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
            return real.name(p);                        \
        return hp_usable_size((void *)p);               \
    }
SIZE_FN(mi_usable_size)
SIZE_FN(mi_malloc_size)
SIZE_FN(mi_malloc_usable_size)
#undef SIZE_FN

/* mi_expand resizes only in place: a block of the shim's keeps its size, so the answer is p
 * when newsize fits in what it has, as mimalloc answers for its own blocks. */
#define EXPAND_FN(name)                                      \
    void *hp_##name(const void *ra, void *p, size_t n)       \
    {                                                        \
        ENTRY(name, p, n);                                   \
        if (!mine(p))                                        \
            return REAL(name) ? real.name(p, n) : NULL;      \
        return n <= hp_usable_size(p) ? p : NULL;            \
    }
EXPAND_FN(mi_expand)
EXPAND_FN(mi__expand)
#undef EXPAND_FN

/* ---------- reallocation ---------- */

SIMPLE(mi_realloc, (void *p, size_t n), p COMMA n, do_realloc(p, n, 0))

SIMPLE(mi_rezalloc, (void *p, size_t n), p COMMA n, do_realloc(p, n, 1))

/* Reallocations of count * size: an overflow is mimalloc's to answer. */
#define REALLOC_N(name, zero)                                    \
    void *hp_##name(const void *ra, void *p, size_t c, size_t n) \
    {                                                            \
        ENTRY(name, p, c, n);                                    \
        size_t t;                                                \
        if (mul_over(c, n, &t) || (p && !mine(p)))               \
            return REAL(name) ? real.name(p, c, n) : NULL;       \
        return do_realloc(p, t, zero);                           \
    }
REALLOC_N(mi_reallocn, 0)
REALLOC_N(mi_recalloc, 1)
#undef REALLOC_N

void *hp_mi_reallocf(const void *ra, void *p, size_t n)
{
    ENTRY(mi_reallocf, p, n);
    if (p && !mine(p))
        return REAL(mi_reallocf) ? real.mi_reallocf(p, n) : NULL;
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
        return REAL(mi_reallocarray) ? real.mi_reallocarray(p, c, n) : NULL;
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
        return REAL(mi_reallocarr) ? real.mi_reallocarr(pp, c, n) : EINVAL;
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

#define RECALLOC_ALIGNED(name, params, args, a, o)                    \
    void *hp_##name(const void *ra, UNPAREN params)                   \
    {                                                                 \
        ENTRY(name, args);                                            \
        size_t t;                                                     \
        if (mul_over(c, n, &t) || (p && !mine(p)))                    \
            return REAL(name) ? real.name(args) : NULL;               \
        return do_realloc_aligned(p, t, a, o, 1);                     \
    }
RECALLOC_ALIGNED(mi_recalloc_aligned, (void *p, size_t c, size_t n, size_t a), p COMMA c COMMA n COMMA a, a, 0)
RECALLOC_ALIGNED(mi_recalloc_aligned_at, (void *p, size_t c, size_t n, size_t a, size_t o),
                 p COMMA c COMMA n COMMA a COMMA o, a, o)
RECALLOC_ALIGNED(mi_aligned_recalloc, (void *p, size_t c, size_t n, size_t a), p COMMA c COMMA n COMMA a, a, 0)
RECALLOC_ALIGNED(mi_aligned_offset_recalloc, (void *p, size_t c, size_t n, size_t a, size_t o),
                 p COMMA c COMMA n COMMA a COMMA o, a, o)
#undef RECALLOC_ALIGNED

/* ---------- C++ ---------- */

void *hp_mi_new(const void *ra, size_t n)
{
    ENTRY(mi_new, n);
    return hp_new(n, 0, 0);
}

void *hp_mi_new_nothrow(const void *ra, size_t n)
{
    ENTRY(mi_new_nothrow, n);
    return hp_new(n, 0, 1);
}

void *hp_mi_new_aligned(const void *ra, size_t n, size_t a)
{
    ENTRY(mi_new_aligned, n, a);
    if (!valid(a, 0) && REAL(mi_new_aligned))
        return real.mi_new_aligned(n, a);
    return hp_new(n, a, 0);
}

void *hp_mi_new_aligned_nothrow(const void *ra, size_t n, size_t a)
{
    ENTRY(mi_new_aligned_nothrow, n, a);
    if (!valid(a, 0) && REAL(mi_new_aligned_nothrow))
        return real.mi_new_aligned_nothrow(n, a);
    return hp_new(n, a, 1);
}

void *hp_mi_new_n(const void *ra, size_t c, size_t n)
{
    ENTRY(mi_new_n, c, n);
    size_t t;
    if (mul_over(c, n, &t) && REAL(mi_new_n))
        return real.mi_new_n(c, n);
    return hp_new(mul_over(c, n, &t) ? SIZE_MAX : t, 0, 0);
}

/* realloc that, out of memory, goes the way of operator new (the new_handler, then
 * std::bad_alloc): the new block then comes from operator new and the data moves. */
static void *new_realloc(void *p, size_t n)
{
    void *q = do_realloc(p, n, 0);
    if (q)
        return q;
    q = hp_new(n, 0, 0);
    return p ? moved(p, q, n) : q;
}

void *hp_mi_new_realloc(const void *ra, void *p, size_t n)
{
    ENTRY(mi_new_realloc, p, n);
    if (p && !mine(p))
        return REAL(mi_new_realloc) ? real.mi_new_realloc(p, n) : NULL;
    return new_realloc(p, n);
}

void *hp_mi_new_reallocn(const void *ra, void *p, size_t c, size_t n)
{
    ENTRY(mi_new_reallocn, p, c, n);
    size_t t;
    if (mul_over(c, n, &t) || (p && !mine(p)))
        return REAL(mi_new_reallocn) ? real.mi_new_reallocn(p, c, n) : NULL;
    return new_realloc(p, t);
}

/* ---------- heaps ---------- */

/* Raw memory for hp_alloc_from: n bytes of heap h. */
static void *heap_get(void *h, size_t n, int zero)
{
    return zero ? real.mi_heap_zalloc(h, n) : real.mi_heap_malloc(h, n);
}

/* An aligned block in heap h: the shim's when mimalloc is the backend and the shim can place
 * it, else mimalloc's own answer (an alignment of 0 is an error there). */
static void *heap_aligned(mi_heap_t *h, size_t n, size_t a, size_t o, int zero)
{
    if (heap_here && valid(a, o))
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
    if (heap_here)
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
#define HEAP_N(name, params, args, a, o, zero)                               \
    void *hp_##name(const void *ra, UNPAREN params)                          \
    {                                                                        \
        ENTRY(name, args);                                                   \
        size_t t;                                                            \
        if (mul_over(c, n, &t) || !heap_here || (a && !valid(a, o)))         \
            return REAL(name) ? real.name(args) : NULL;                      \
        return heap_alloc(h, t, a, o, zero);                                 \
    }
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
    if (!heap_here && REAL(mi_heap_strdup))
        return real.mi_heap_strdup(h, s);
    return s ? heap_dup(h, s, strlen(s)) : NULL;
}

char *hp_mi_heap_strndup(const void *ra, mi_heap_t *h, const char *s, size_t n)
{
    ENTRY(mi_heap_strndup, h, s, n);
    if (!heap_here && REAL(mi_heap_strndup))
        return real.mi_heap_strndup(h, s, n);
    return s ? heap_dup(h, s, strnlen(s, n)) : NULL;
}

char *hp_mi_heap_realpath(const void *ra, mi_heap_t *h, const char *name, char *resolved)
{
    ENTRY(mi_heap_realpath, h, name, resolved);
    if (!heap_here && REAL(mi_heap_realpath))
        return real.mi_heap_realpath(h, name, resolved);
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
            return REAL(name) ? real.name(args) : NULL;                    \
        return moved(p, heap_alloc(h, n, a, o, zero), n);                  \
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

#define HEAP_REALLOC_N(name, params, args, a, o, zero)                     \
    void *hp_##name(const void *ra, UNPAREN params)                        \
    {                                                                      \
        ENTRY(name, args);                                                 \
        size_t t;                                                          \
        if (mul_over(c, n, &t) || (p && !mine(p)))                         \
            return REAL(name) ? real.name(args) : NULL;                    \
        if (!p)                                                            \
            return heap_alloc(h, t, a, o, zero);                           \
        return moved(p, heap_alloc(h, t, a, o, zero), t);                  \
    }
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
        return REAL(mi_heap_reallocf) ? real.mi_heap_reallocf(h, p, n) : NULL;
    if (!p)
        return heap_alloc(h, n, 0, 0, 0);
    void *q = moved(p, heap_alloc(h, n, 0, 0, 0), n);
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
        return REAL(mi_heap_alloc_new_n) ? real.mi_heap_alloc_new_n(h, c, n) : hp_new(SIZE_MAX, 0, 0);
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

/* mi_heap_visit_blocks shows the program its blocks: for one of the shim's, where the program's
 * block is and its usable size, not the allocator's block around it. */
struct visit {
    mi_visit_fn *fn;
    void *arg;
};

static bool visit_user(const mi_heap_t *h, const void *area, void *block, size_t size, void *arg)
{
    const struct visit *v = arg;
    void *u = block ? hp_block_in(block, size) : NULL;
    if (u) {
        size_t end = (size_t)((uintptr_t)block + size - (uintptr_t)u);
        size_t usable = hp_usable_size(u);
        block = u;
        size = usable < end ? usable : end;
    }
    /* The program's visitor runs inside mimalloc: with mimalloc patched in front, its calls
     * (mi_usable_size of the block) must come to the shim, not to mimalloc's original code. */
    int st = hp_patch_suspend();
    bool more = v->fn(h, area, block, size, v->arg);
    hp_patch_resume(st);
    return more;
}

bool hp_mi_heap_visit_blocks(const void *ra, const mi_heap_t *h, bool all, mi_visit_fn *fn, void *arg)
{
    ENTRY(mi_heap_visit_blocks, h, all, fn, arg);
    if (!REAL(mi_heap_visit_blocks))
        return false;
    if (!all || !heap_here)
        return real.mi_heap_visit_blocks(h, all, fn, arg);
    struct visit v = {fn, arg};
    return real.mi_heap_visit_blocks(h, all, visit_user, &v);
}

/* The program's functions mimalloc calls from inside an allocation (a deferred free, its
 * error handler): with mimalloc patched in front of the shim, such a call runs while the shim
 * is inside mimalloc's original code, and a free() of the shim's block there would go straight
 * to mimalloc. They run with the patched entry points live again. */
static mi_deferred_fn *prog_deferred;
static void *prog_deferred_arg;
static mi_error_fn *prog_error;
static void *prog_error_arg;

static void deferred_outside(bool force, unsigned long long heartbeat, void *arg)
{
    (void)arg;
    int st = hp_patch_suspend();
    mi_deferred_fn *fn = __atomic_load_n(&prog_deferred, __ATOMIC_ACQUIRE);
    if (fn)
        fn(force, heartbeat, __atomic_load_n(&prog_deferred_arg, __ATOMIC_RELAXED));
    hp_patch_resume(st);
}

static void error_outside(int err, void *arg)
{
    (void)arg;
    int st = hp_patch_suspend();
    mi_error_fn *fn = __atomic_load_n(&prog_error, __ATOMIC_ACQUIRE);
    if (fn)
        fn(err, __atomic_load_n(&prog_error_arg, __ATOMIC_RELAXED));
    hp_patch_resume(st);
}

/* Register the program's function fn: through its wrapper when mimalloc is patched in front. */
#define REGISTER(name, type, slot, slot_arg, wrapper)             \
    void hp_##name(const void *ra, type *fn, void *arg)           \
    {                                                             \
        ENTRY(name, fn, arg);                                     \
        if (!REAL(name))                                          \
            return;                                               \
        if (!hp_be.in_front || !fn) {                             \
            real.name(fn, arg);                                   \
            return;                                               \
        }                                                         \
        __atomic_store_n(&slot_arg, arg, __ATOMIC_RELAXED);       \
        __atomic_store_n(&slot, fn, __ATOMIC_RELEASE);            \
        real.name(wrapper, NULL);                                 \
    }
REGISTER(mi_register_deferred_free, mi_deferred_fn, prog_deferred, prog_deferred_arg, deferred_outside)
REGISTER(mi_register_error, mi_error_fn, prog_error, prog_error_arg, error_outside)
#undef REGISTER

/* mi_heap_destroy frees every block still in the heap at once: the shim's among them are
 * recorded as freed first. (mimalloc deletes instead of destroying the backing heap, whose
 * blocks then live on: those are left alone.) */
void hp_mi_heap_destroy(const void *ra, mi_heap_t *h)
{
    ENTRY(mi_heap_destroy, h);
    if (heap_here && h && REAL(mi_heap_visit_blocks) &&
        (!REAL(mi_heap_get_backing) || h != real.mi_heap_get_backing()))
        real.mi_heap_visit_blocks(h, true, forget_visit, NULL);
    if (REAL(mi_heap_destroy))
        real.mi_heap_destroy(h);
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
    if (__atomic_load_n(&found, __ATOMIC_ACQUIRE) && mi_reallocarr_next && own())
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
