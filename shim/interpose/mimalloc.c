/* mimalloc's own API (mimalloc.h), for programs written against it, and the BSD names
 * libmimalloc defines too: each a one-line forward into core/mimalloc_*.c, which is given the
 * caller's address (HP_CALLER) to tell mimalloc's own calls from the program's. */
#include "core/core.h"
#include "rt/rt.h"

#include <stdbool.h>
#include <stddef.h>

HP_EXPORT void *mi_malloc(size_t n) { return hp_mi_malloc(HP_CALLER, n); }
HP_EXPORT void *mi_calloc(size_t c, size_t n) { return hp_mi_calloc(HP_CALLER, c, n); }
HP_EXPORT void *mi_zalloc(size_t n) { return hp_mi_zalloc(HP_CALLER, n); }
HP_EXPORT void *mi_malloc_small(size_t n) { return hp_mi_malloc_small(HP_CALLER, n); }
HP_EXPORT void *mi_zalloc_small(size_t n) { return hp_mi_zalloc_small(HP_CALLER, n); }
HP_EXPORT void *mi_mallocn(size_t c, size_t n) { return hp_mi_mallocn(HP_CALLER, c, n); }
HP_EXPORT char *mi_strdup(const char *s) { return hp_mi_strdup(HP_CALLER, s); }
HP_EXPORT char *mi_strndup(const char *s, size_t n) { return hp_mi_strndup(HP_CALLER, s, n); }

HP_EXPORT char *mi_realpath(const char *name, char *resolved)
{
    return hp_mi_realpath(HP_CALLER, name, resolved);
}

HP_EXPORT unsigned char *mi_mbsdup(const unsigned char *s) { return hp_mi_mbsdup(HP_CALLER, s); }
HP_EXPORT unsigned short *mi_wcsdup(const unsigned short *s) { return hp_mi_wcsdup(HP_CALLER, s); }
HP_EXPORT void *mi_malloc_aligned(size_t n, size_t a) { return hp_mi_malloc_aligned(HP_CALLER, n, a); }

HP_EXPORT void *mi_malloc_aligned_at(size_t n, size_t a, size_t o)
{
    return hp_mi_malloc_aligned_at(HP_CALLER, n, a, o);
}

HP_EXPORT void *mi_zalloc_aligned(size_t n, size_t a) { return hp_mi_zalloc_aligned(HP_CALLER, n, a); }

HP_EXPORT void *mi_zalloc_aligned_at(size_t n, size_t a, size_t o)
{
    return hp_mi_zalloc_aligned_at(HP_CALLER, n, a, o);
}

HP_EXPORT void *mi_calloc_aligned(size_t c, size_t n, size_t a)
{
    return hp_mi_calloc_aligned(HP_CALLER, c, n, a);
}

HP_EXPORT void *mi_calloc_aligned_at(size_t c, size_t n, size_t a, size_t o)
{
    return hp_mi_calloc_aligned_at(HP_CALLER, c, n, a, o);
}

HP_EXPORT void *mi_memalign(size_t a, size_t n) { return hp_mi_memalign(HP_CALLER, a, n); }

HP_EXPORT int mi_posix_memalign(void **out, size_t a, size_t n)
{
    return hp_mi_posix_memalign(HP_CALLER, out, a, n);
}

HP_EXPORT void *mi_aligned_alloc(size_t a, size_t n) { return hp_mi_aligned_alloc(HP_CALLER, a, n); }
HP_EXPORT void *mi_valloc(size_t n) { return hp_mi_valloc(HP_CALLER, n); }
HP_EXPORT void *mi_pvalloc(size_t n) { return hp_mi_pvalloc(HP_CALLER, n); }
HP_EXPORT void *mi_realloc(void *p, size_t n) { return hp_mi_realloc(HP_CALLER, p, n); }
HP_EXPORT void *mi_expand(void *p, size_t n) { return hp_mi_expand(HP_CALLER, p, n); }
HP_EXPORT void *mi__expand(void *p, size_t n) { return hp_mi__expand(HP_CALLER, p, n); }
HP_EXPORT void *mi_reallocn(void *p, size_t c, size_t n) { return hp_mi_reallocn(HP_CALLER, p, c, n); }
HP_EXPORT void *mi_reallocf(void *p, size_t n) { return hp_mi_reallocf(HP_CALLER, p, n); }

HP_EXPORT void *mi_reallocarray(void *p, size_t c, size_t n)
{
    return hp_mi_reallocarray(HP_CALLER, p, c, n);
}

HP_EXPORT int mi_reallocarr(void *pp, size_t c, size_t n) { return hp_mi_reallocarr(HP_CALLER, pp, c, n); }
HP_EXPORT void *mi_rezalloc(void *p, size_t n) { return hp_mi_rezalloc(HP_CALLER, p, n); }
HP_EXPORT void *mi_recalloc(void *p, size_t c, size_t n) { return hp_mi_recalloc(HP_CALLER, p, c, n); }

HP_EXPORT void *mi_realloc_aligned(void *p, size_t n, size_t a)
{
    return hp_mi_realloc_aligned(HP_CALLER, p, n, a);
}

HP_EXPORT void *mi_realloc_aligned_at(void *p, size_t n, size_t a, size_t o)
{
    return hp_mi_realloc_aligned_at(HP_CALLER, p, n, a, o);
}

HP_EXPORT void *mi_rezalloc_aligned(void *p, size_t n, size_t a)
{
    return hp_mi_rezalloc_aligned(HP_CALLER, p, n, a);
}

HP_EXPORT void *mi_rezalloc_aligned_at(void *p, size_t n, size_t a, size_t o)
{
    return hp_mi_rezalloc_aligned_at(HP_CALLER, p, n, a, o);
}

HP_EXPORT void *mi_recalloc_aligned(void *p, size_t c, size_t n, size_t a)
{
    return hp_mi_recalloc_aligned(HP_CALLER, p, c, n, a);
}

HP_EXPORT void *mi_recalloc_aligned_at(void *p, size_t c, size_t n, size_t a, size_t o)
{
    return hp_mi_recalloc_aligned_at(HP_CALLER, p, c, n, a, o);
}

HP_EXPORT void *mi_aligned_recalloc(void *p, size_t c, size_t n, size_t a)
{
    return hp_mi_aligned_recalloc(HP_CALLER, p, c, n, a);
}

HP_EXPORT void *mi_aligned_offset_recalloc(void *p, size_t c, size_t n, size_t a, size_t o)
{
    return hp_mi_aligned_offset_recalloc(HP_CALLER, p, c, n, a, o);
}

HP_EXPORT void mi_free(void *p) { hp_mi_free(HP_CALLER, p); }
HP_EXPORT void mi_cfree(void *p) { hp_mi_cfree(HP_CALLER, p); }
HP_EXPORT void mi_free_size(void *p, size_t n) { hp_mi_free_size(HP_CALLER, p, n); }
HP_EXPORT void mi_free_aligned(void *p, size_t a) { hp_mi_free_aligned(HP_CALLER, p, a); }

HP_EXPORT void mi_free_size_aligned(void *p, size_t n, size_t a)
{
    hp_mi_free_size_aligned(HP_CALLER, p, n, a);
}

HP_EXPORT size_t mi_usable_size(const void *p) { return hp_mi_usable_size(HP_CALLER, p); }
HP_EXPORT size_t mi_malloc_size(const void *p) { return hp_mi_malloc_size(HP_CALLER, p); }
HP_EXPORT size_t mi_malloc_usable_size(const void *p) { return hp_mi_malloc_usable_size(HP_CALLER, p); }
HP_EXPORT void *mi_new(size_t n) { return hp_mi_new(HP_CALLER, n); }
HP_EXPORT void *mi_new_aligned(size_t n, size_t a) { return hp_mi_new_aligned(HP_CALLER, n, a); }
HP_EXPORT void *mi_new_nothrow(size_t n) { return hp_mi_new_nothrow(HP_CALLER, n); }

HP_EXPORT void *mi_new_aligned_nothrow(size_t n, size_t a)
{
    return hp_mi_new_aligned_nothrow(HP_CALLER, n, a);
}

HP_EXPORT void *mi_new_n(size_t c, size_t n) { return hp_mi_new_n(HP_CALLER, c, n); }
HP_EXPORT void *mi_new_realloc(void *p, size_t n) { return hp_mi_new_realloc(HP_CALLER, p, n); }

HP_EXPORT void *mi_new_reallocn(void *p, size_t c, size_t n)
{
    return hp_mi_new_reallocn(HP_CALLER, p, c, n);
}

HP_EXPORT void *mi_heap_malloc(mi_heap_t *h, size_t n) { return hp_mi_heap_malloc(HP_CALLER, h, n); }
HP_EXPORT void *mi_heap_zalloc(mi_heap_t *h, size_t n) { return hp_mi_heap_zalloc(HP_CALLER, h, n); }

HP_EXPORT void *mi_heap_calloc(mi_heap_t *h, size_t c, size_t n)
{
    return hp_mi_heap_calloc(HP_CALLER, h, c, n);
}

HP_EXPORT void *mi_heap_mallocn(mi_heap_t *h, size_t c, size_t n)
{
    return hp_mi_heap_mallocn(HP_CALLER, h, c, n);
}

HP_EXPORT void *mi_heap_malloc_small(mi_heap_t *h, size_t n)
{
    return hp_mi_heap_malloc_small(HP_CALLER, h, n);
}

HP_EXPORT char *mi_heap_strdup(mi_heap_t *h, const char *s) { return hp_mi_heap_strdup(HP_CALLER, h, s); }

HP_EXPORT char *mi_heap_strndup(mi_heap_t *h, const char *s, size_t n)
{
    return hp_mi_heap_strndup(HP_CALLER, h, s, n);
}

HP_EXPORT char *mi_heap_realpath(mi_heap_t *h, const char *name, char *resolved)
{
    return hp_mi_heap_realpath(HP_CALLER, h, name, resolved);
}

HP_EXPORT void *mi_heap_malloc_aligned(mi_heap_t *h, size_t n, size_t a)
{
    return hp_mi_heap_malloc_aligned(HP_CALLER, h, n, a);
}

HP_EXPORT void *mi_heap_malloc_aligned_at(mi_heap_t *h, size_t n, size_t a, size_t o)
{
    return hp_mi_heap_malloc_aligned_at(HP_CALLER, h, n, a, o);
}

HP_EXPORT void *mi_heap_zalloc_aligned(mi_heap_t *h, size_t n, size_t a)
{
    return hp_mi_heap_zalloc_aligned(HP_CALLER, h, n, a);
}

HP_EXPORT void *mi_heap_zalloc_aligned_at(mi_heap_t *h, size_t n, size_t a, size_t o)
{
    return hp_mi_heap_zalloc_aligned_at(HP_CALLER, h, n, a, o);
}

HP_EXPORT void *mi_heap_calloc_aligned(mi_heap_t *h, size_t c, size_t n, size_t a)
{
    return hp_mi_heap_calloc_aligned(HP_CALLER, h, c, n, a);
}

HP_EXPORT void *mi_heap_calloc_aligned_at(mi_heap_t *h, size_t c, size_t n, size_t a, size_t o)
{
    return hp_mi_heap_calloc_aligned_at(HP_CALLER, h, c, n, a, o);
}

HP_EXPORT void *mi_heap_realloc(mi_heap_t *h, void *p, size_t n)
{
    return hp_mi_heap_realloc(HP_CALLER, h, p, n);
}

HP_EXPORT void *mi_heap_reallocn(mi_heap_t *h, void *p, size_t c, size_t n)
{
    return hp_mi_heap_reallocn(HP_CALLER, h, p, c, n);
}

HP_EXPORT void *mi_heap_reallocf(mi_heap_t *h, void *p, size_t n)
{
    return hp_mi_heap_reallocf(HP_CALLER, h, p, n);
}

HP_EXPORT void *mi_heap_rezalloc(mi_heap_t *h, void *p, size_t n)
{
    return hp_mi_heap_rezalloc(HP_CALLER, h, p, n);
}

HP_EXPORT void *mi_heap_recalloc(mi_heap_t *h, void *p, size_t c, size_t n)
{
    return hp_mi_heap_recalloc(HP_CALLER, h, p, c, n);
}

HP_EXPORT void *mi_heap_realloc_aligned(mi_heap_t *h, void *p, size_t n, size_t a)
{
    return hp_mi_heap_realloc_aligned(HP_CALLER, h, p, n, a);
}

HP_EXPORT void *mi_heap_realloc_aligned_at(mi_heap_t *h, void *p, size_t n, size_t a, size_t o)
{
    return hp_mi_heap_realloc_aligned_at(HP_CALLER, h, p, n, a, o);
}

HP_EXPORT void *mi_heap_rezalloc_aligned(mi_heap_t *h, void *p, size_t n, size_t a)
{
    return hp_mi_heap_rezalloc_aligned(HP_CALLER, h, p, n, a);
}

HP_EXPORT void *mi_heap_rezalloc_aligned_at(mi_heap_t *h, void *p, size_t n, size_t a, size_t o)
{
    return hp_mi_heap_rezalloc_aligned_at(HP_CALLER, h, p, n, a, o);
}

HP_EXPORT void *mi_heap_recalloc_aligned(mi_heap_t *h, void *p, size_t c, size_t n, size_t a)
{
    return hp_mi_heap_recalloc_aligned(HP_CALLER, h, p, c, n, a);
}

HP_EXPORT void *mi_heap_recalloc_aligned_at(mi_heap_t *h, void *p, size_t c, size_t n, size_t a, size_t o)
{
    return hp_mi_heap_recalloc_aligned_at(HP_CALLER, h, p, c, n, a, o);
}

HP_EXPORT void *mi_heap_alloc_new(mi_heap_t *h, size_t n) { return hp_mi_heap_alloc_new(HP_CALLER, h, n); }

HP_EXPORT void *mi_heap_alloc_new_n(mi_heap_t *h, size_t c, size_t n)
{
    return hp_mi_heap_alloc_new_n(HP_CALLER, h, c, n);
}

HP_EXPORT void mi_heap_destroy(mi_heap_t *h) { hp_mi_heap_destroy(HP_CALLER, h); }

HP_EXPORT bool mi_heap_visit_blocks(const mi_heap_t *h, bool all, mi_visit_fn *fn, void *arg)
{
    return hp_mi_heap_visit_blocks(HP_CALLER, h, all, fn, arg);
}

HP_EXPORT void mi_register_deferred_free(mi_deferred_fn *fn, void *arg)
{
    hp_mi_register_deferred_free(HP_CALLER, fn, arg);
}

HP_EXPORT void mi_register_error(mi_error_fn *fn, void *arg) { hp_mi_register_error(HP_CALLER, fn, arg); }

HP_EXPORT void *reallocf(void *p, size_t n) { return hp_reallocf(p, n); }
HP_EXPORT int reallocarr(void *pp, size_t c, size_t n) { return hp_reallocarr(pp, c, n); }
