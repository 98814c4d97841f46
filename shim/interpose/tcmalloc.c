/* gperftools' (tcmalloc's) tc_* functions, for programs written against them: each a one-line
 * forward to the core function its C or C++ counterpart uses. */
#include "core/core.h"
#include "rt/rt.h"

#include <stddef.h>

HP_EXPORT void *tc_malloc(size_t size) { return hp_alloc(size, 0, 0); }
HP_EXPORT void *tc_malloc_skip_new_handler(size_t size) { return hp_alloc(size, 0, 0); }
HP_EXPORT void tc_free(void *p) { hp_free(p); }
HP_EXPORT void tc_free_sized(void *p, size_t size) { (void)size; hp_free(p); }
HP_EXPORT void tc_cfree(void *p) { hp_free(p); }
HP_EXPORT void *tc_realloc(void *p, size_t size) { return hp_realloc(p, size); }
HP_EXPORT void *tc_calloc(size_t n, size_t size) { return hp_calloc(n, size); }
HP_EXPORT void *tc_memalign(size_t align, size_t size) { return hp_memalign(align, size); }
HP_EXPORT int tc_posix_memalign(void **out, size_t align, size_t size)
{
    return hp_posix_memalign(out, align, size);
}
HP_EXPORT void *tc_valloc(size_t size) { return hp_valloc(size); }
HP_EXPORT void *tc_pvalloc(size_t size) { return hp_pvalloc(size); }
HP_EXPORT size_t tc_malloc_size(void *p) { return hp_usable_size(p); }
HP_EXPORT size_t tc_nallocx(size_t size, int flags) { return hp_nallocx(size, flags); }
HP_EXPORT void *tc_new(size_t size) { return hp_new(size, 0, 0); }
HP_EXPORT void *tc_newarray(size_t size) { return hp_new(size, 0, 0); }
HP_EXPORT void *tc_new_nothrow(size_t size, const void *t) { (void)t; return hp_new(size, 0, 1); }
HP_EXPORT void *tc_newarray_nothrow(size_t size, const void *t) { (void)t; return hp_new(size, 0, 1); }
HP_EXPORT void *tc_new_aligned(size_t size, size_t a) { return hp_new(size, a, 0); }
HP_EXPORT void *tc_newarray_aligned(size_t size, size_t a) { return hp_new(size, a, 0); }
HP_EXPORT void *tc_new_aligned_nothrow(size_t size, size_t a, const void *t)
{
    (void)t; return hp_new(size, a, 1);
}
HP_EXPORT void *tc_newarray_aligned_nothrow(size_t size, size_t a, const void *t)
{
    (void)t; return hp_new(size, a, 1);
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
