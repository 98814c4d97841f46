/* The C allocation entry points (and glibc's __libc_* names for them): each forwards in one
 * line to the shim's allocation paths in alloc.c. */
#include "hp.h"
#include "backend.h"

#include <errno.h>
#include <malloc.h>
#include <stdlib.h>

HP_EXPORT void *malloc(size_t size) { return hp_alloc(size, 0, 0); }
HP_EXPORT void free(void *p) { hp_free(p); }
HP_EXPORT void *realloc(void *p, size_t size) { return hp_realloc(p, size); }
HP_EXPORT size_t malloc_usable_size(void *p) { return hp_usable_size(p); }
HP_EXPORT void free_sized(void *p, size_t size) { (void)size; hp_free(p); }
HP_EXPORT void free_aligned_sized(void *p, size_t align, size_t size) { (void)align, (void)size; hp_free(p); }

/* The address of the shim's own malloc, not whatever "malloc" resolves to globally. */
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wmissing-attributes"
#endif
extern void *hp_self_malloc(size_t) __attribute__((alias("malloc"), visibility("hidden")));
void *hp_self_malloc_addr(void) { return (void *)&hp_self_malloc; }

HP_EXPORT void *calloc(size_t n, size_t size)
{
    size_t total;
    if (__builtin_mul_overflow(n, size, &total)) {
        errno = ENOMEM;
        return NULL;
    }
    return hp_alloc(total, 0, 1);
}

HP_EXPORT void *reallocarray(void *p, size_t n, size_t size)
{
    size_t total;
    if (__builtin_mul_overflow(n, size, &total)) {
        errno = ENOMEM;
        return NULL;
    }
    return hp_realloc(p, total);
}

HP_EXPORT void *__libc_malloc(size_t size) { return malloc(size); }
HP_EXPORT void __libc_free(void *p) { free(p); }
HP_EXPORT void *__libc_calloc(size_t n, size_t size) { return calloc(n, size); }
HP_EXPORT void *__libc_realloc(void *p, size_t size) { return realloc(p, size); }

/* Tuning and statistics belong to the underlying allocator. */
HP_EXPORT int mallopt(int param, int value)
{
    return hp_ready() && hp_be.mallopt ? hp_be.mallopt(param, value) : 0;
}

HP_EXPORT struct mallinfo mallinfo(void)
{
    struct mallinfo mi = {0};
    return hp_ready() && hp_be.mallinfo ? hp_be.mallinfo() : mi;
}

HP_EXPORT struct mallinfo2 mallinfo2(void)
{
    struct mallinfo2 mi = {0};
    return hp_ready() && hp_be.mallinfo2 ? hp_be.mallinfo2() : mi;
}

HP_EXPORT int malloc_trim(size_t pad) { return hp_ready() && hp_be.malloc_trim ? hp_be.malloc_trim(pad) : 0; }

HP_EXPORT void malloc_stats(void)
{
    if (hp_ready() && hp_be.malloc_stats)
        hp_be.malloc_stats();
}

HP_EXPORT int malloc_info(int options, FILE *fp)
{
    if (hp_ready() && hp_be.malloc_info)
        return hp_be.malloc_info(options, fp);
    errno = ENOSYS;
    return -1;
}
