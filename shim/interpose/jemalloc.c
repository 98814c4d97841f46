/* Other allocators' own entry points, for programs written against them: jemalloc's extended
 * API (mallocx and friends) and gperftools' tc_* functions. A program linked with jemalloc may
 * call sallocx or sdallocx on a block that malloc returned; the shim made that block, so these
 * must go through the shim too, or the allocator receives a pointer into the middle of one of
 * its blocks. jemalloc's arena and thread-cache flags reach the backend's mallocx/dallocx when
 * it has them; blocks the shim did not make go to the backend's own functions. */
#include "core/core.h"
#include "backend/backend.h"
#include "core/header_internal.h"
#include "rt/rt.h"

#include <stddef.h>
#include <stdint.h>
#include <string.h>

/* jemalloc's flag bits (jemalloc/jemalloc.h): the low six bits are log2 of the alignment,
 * 0x40 asks for zeroed memory, bits 8-19 name a thread cache, bits 20 and up an arena. */
#define LG_ALIGN_MASK 0x3f
#define TCACHE_MASK 0xfff00
#define EXTRA_MASK (~0xff)

static size_t flags_align(int flags)
{
    int lg = flags & LG_ALIGN_MASK;
    return lg ? (size_t)1 << lg : 0;
}

static void *x_alloc(size_t size, int flags)
{
    size_t align = flags_align(flags);
    return hp_alloc_x(size, align > 16 ? align : 0, (flags & HP_MALLOCX_ZERO) != 0, flags & EXTRA_MASK);
}

HP_EXPORT void *mallocx(size_t size, int flags) { return x_alloc(size, flags); }

HP_EXPORT void dallocx(void *p, int flags) { hp_free_x(p, flags & TCACHE_MASK); }

HP_EXPORT void sdallocx(void *p, size_t size, int flags)
{
    (void)size; /* the backend's block is larger than the size the program knows */
    hp_free_x(p, flags & TCACHE_MASK);
}

HP_EXPORT size_t sallocx(const void *p, int flags)
{
    (void)flags;
    return hp_usable_size((void *)p);
}

HP_EXPORT void *rallocx(void *p, size_t size, int flags)
{
    if (!p)
        return x_alloc(size, flags);
    if (!hp_owns(p))
        return hp_be.rallocx ? hp_be.rallocx(p, size, flags) : NULL;
    size_t align = flags_align(flags);
    if (align <= 16 && !(flags & (HP_MALLOCX_ZERO | EXTRA_MASK)))
        return hp_realloc(p, size ? size : 1); /* rallocx never frees */
    /* A new block with the requested properties; bytes past the old block's usable size
     * stay zero under MALLOCX_ZERO, as jemalloc documents. */
    size_t old = hp_usable_size(p);
    void *n = x_alloc(size, flags);
    if (!n)
        return NULL;
    memcpy(n, p, old < size ? old : size);
    hp_free_x(p, flags & TCACHE_MASK);
    return n;
}

HP_EXPORT size_t xallocx(void *p, size_t size, size_t extra, int flags)
{
    if (p && !hp_owns(p) && hp_be.xallocx)
        return hp_be.xallocx(p, size, extra, flags);
    /* A block of the shim's cannot change size in place; the answer is its usable size, which
     * is what xallocx returns when it cannot resize. */
    return hp_usable_size(p);
}

/* What mallocx(size, flags) gives at least. */
HP_EXPORT size_t nallocx(size_t size, int flags)
{
    size_t align = flags_align(flags);
    if (align < 16)
        align = 16;
    if (size == 0)
        size = 1;
    if (size > HP_MAX_REQUEST || align > HP_MAX_REQUEST)
        return 0;
    return (size + align - 1) & ~(align - 1);
}

/* ---------- gperftools (tcmalloc) ---------- */

/* The shim's own exported entry points (new_delete.c, memalign.c). */
void *_Znwm(size_t);
void *_Znam(size_t);
void *_ZnwmRKSt9nothrow_t(size_t, const void *);
void *_ZnamRKSt9nothrow_t(size_t, const void *);
void *_ZnwmSt11align_val_t(size_t, size_t);
void *_ZnamSt11align_val_t(size_t, size_t);
void *_ZnwmSt11align_val_tRKSt9nothrow_t(size_t, size_t, const void *);
void *_ZnamSt11align_val_tRKSt9nothrow_t(size_t, size_t, const void *);
void *memalign(size_t, size_t);
int posix_memalign(void **, size_t, size_t);
void *valloc(size_t);
void *pvalloc(size_t);
void *calloc(size_t, size_t);

HP_EXPORT void *tc_malloc(size_t size) { return hp_alloc(size, 0, 0); }
HP_EXPORT void *tc_malloc_skip_new_handler(size_t size) { return hp_alloc(size, 0, 0); }
HP_EXPORT void tc_free(void *p) { hp_free(p); }
HP_EXPORT void tc_free_sized(void *p, size_t size) { (void)size; hp_free(p); }
HP_EXPORT void tc_cfree(void *p) { hp_free(p); }
HP_EXPORT void *tc_realloc(void *p, size_t size) { return hp_realloc(p, size); }
HP_EXPORT void *tc_calloc(size_t n, size_t size) { return calloc(n, size); }
HP_EXPORT void *tc_memalign(size_t align, size_t size) { return memalign(align, size); }
HP_EXPORT int tc_posix_memalign(void **out, size_t align, size_t size) { return posix_memalign(out, align, size); }
HP_EXPORT void *tc_valloc(size_t size) { return valloc(size); }
HP_EXPORT void *tc_pvalloc(size_t size) { return pvalloc(size); }
HP_EXPORT size_t tc_malloc_size(void *p) { return hp_usable_size(p); }
HP_EXPORT size_t tc_nallocx(size_t size, int flags) { return nallocx(size, flags); }
HP_EXPORT void *tc_new(size_t size) { return _Znwm(size); }
HP_EXPORT void *tc_newarray(size_t size) { return _Znam(size); }
HP_EXPORT void *tc_new_nothrow(size_t size, const void *t) { return _ZnwmRKSt9nothrow_t(size, t); }
HP_EXPORT void *tc_newarray_nothrow(size_t size, const void *t) { return _ZnamRKSt9nothrow_t(size, t); }
HP_EXPORT void *tc_new_aligned(size_t size, size_t a) { return _ZnwmSt11align_val_t(size, a); }
HP_EXPORT void *tc_newarray_aligned(size_t size, size_t a) { return _ZnamSt11align_val_t(size, a); }
HP_EXPORT void *tc_new_aligned_nothrow(size_t size, size_t a, const void *t)
{
    return _ZnwmSt11align_val_tRKSt9nothrow_t(size, a, t);
}
HP_EXPORT void *tc_newarray_aligned_nothrow(size_t size, size_t a, const void *t)
{
    return _ZnamSt11align_val_tRKSt9nothrow_t(size, a, t);
}
#define TC_DELETE(name, args) \
    HP_EXPORT void name args { hp_free(p); }
TC_DELETE(tc_delete, (void *p))
TC_DELETE(tc_deletearray, (void *p))
TC_DELETE(tc_delete_sized, (void *p, size_t n))
TC_DELETE(tc_deletearray_sized, (void *p, size_t n))
TC_DELETE(tc_delete_nothrow, (void *p, const void *t))
TC_DELETE(tc_deletearray_nothrow, (void *p, const void *t))
TC_DELETE(tc_delete_aligned, (void *p, size_t a))
TC_DELETE(tc_deletearray_aligned, (void *p, size_t a))
TC_DELETE(tc_delete_sized_aligned, (void *p, size_t n, size_t a))
TC_DELETE(tc_deletearray_sized_aligned, (void *p, size_t n, size_t a))
TC_DELETE(tc_delete_aligned_nothrow, (void *p, size_t a, const void *t))
TC_DELETE(tc_deletearray_aligned_nothrow, (void *p, size_t a, const void *t))

/* Old names: cfree (glibc before 2.26, gperftools) and malloc_size (gperftools). */
HP_EXPORT void cfree(void *p) { hp_free(p); }
HP_EXPORT size_t malloc_size(void *p) { return hp_usable_size(p); }
