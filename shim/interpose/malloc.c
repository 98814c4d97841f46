/* The C allocation entry points and glibc's __libc_* names for them, and the allocator's tuning
 * and statistics functions: each a one-line forward into core/. */
#include "core/core.h"
#include "rt/rt.h"

HP_EXPORT HP_HOT void *malloc(size_t size) { return hp_alloc(size, 0, 0); }
HP_EXPORT HP_HOT void free(void *p) { hp_free(p); }
HP_EXPORT HP_HOT void *realloc(void *p, size_t size) { return hp_realloc(p, size); }
HP_EXPORT size_t malloc_usable_size(void *p) { return hp_usable_size(p); }
HP_EXPORT void free_sized(void *p, size_t size) { (void)size; hp_free(p); }
HP_EXPORT void free_aligned_sized(void *p, size_t align, size_t size)
{
    (void)align, (void)size; hp_free(p);
}

/* The address of the shim's own malloc, not whatever "malloc" resolves to globally (init asks,
 * to tell an allocator in front of the shim). */
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wmissing-attributes"
#endif
extern void *hp_self_malloc(size_t) __attribute__((alias("malloc"), visibility("hidden")));
void *hp_self_malloc_addr(void) { return (void *)&hp_self_malloc; }

HP_EXPORT HP_HOT void *calloc(size_t n, size_t size) { return hp_calloc(n, size); }
HP_EXPORT void *reallocarray(void *p, size_t n, size_t size) { return hp_reallocarray(p, n, size); }

/* Old names: cfree (glibc before 2.26, gperftools) and malloc_size (gperftools). */
HP_EXPORT void cfree(void *p) { hp_free(p); }
HP_EXPORT size_t malloc_size(void *p) { return hp_usable_size(p); }

HP_EXPORT void *__libc_malloc(size_t size) { return hp_libc_malloc(size); }
HP_EXPORT void __libc_free(void *p) { hp_libc_free(p); }
HP_EXPORT void *__libc_calloc(size_t n, size_t size) { return hp_libc_calloc(n, size); }
HP_EXPORT void *__libc_realloc(void *p, size_t size) { return hp_libc_realloc(p, size); }

HP_EXPORT int mallopt(int param, int value) { return hp_mallopt(param, value); }
HP_EXPORT struct mallinfo mallinfo(void) { return hp_mallinfo(); }
HP_EXPORT struct mallinfo2 mallinfo2(void) { return hp_mallinfo2(); }
HP_EXPORT int malloc_trim(size_t pad) { return hp_malloc_trim(pad); }
HP_EXPORT void malloc_stats(void) { hp_malloc_stats(); }
HP_EXPORT int malloc_info(int options, FILE *fp) { return hp_malloc_info(options, fp); }
