/* The C allocation entry points (and glibc's __libc_* names for them): each forwards in one
 * line to the shim's allocation paths in alloc.c. */
#include "core/core.h"
#include "backend/backend.h"
#include "bootstrap/bootstrap.h"
#include "rt/rt.h"

#include <errno.h>
#include <malloc.h>
#include <stdlib.h>

HP_EXPORT HP_HOT void *malloc(size_t size) { return hp_alloc(size, 0, 0); }
HP_EXPORT HP_HOT void free(void *p) { hp_free(p); }
HP_EXPORT HP_HOT void *realloc(void *p, size_t size) { return hp_realloc(p, size); }
HP_EXPORT size_t malloc_usable_size(void *p) { return hp_usable_size(p); }
HP_EXPORT void free_sized(void *p, size_t size) { (void)size; hp_free(p); }
HP_EXPORT void free_aligned_sized(void *p, size_t align, size_t size) { (void)align, (void)size; hp_free(p); }

/* The address of the shim's own malloc, not whatever "malloc" resolves to globally. */
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wmissing-attributes"
#endif
extern void *hp_self_malloc(size_t) __attribute__((alias("malloc"), visibility("hidden")));
void *hp_self_malloc_addr(void) { return (void *)&hp_self_malloc; }

HP_EXPORT HP_HOT void *calloc(size_t n, size_t size)
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

/* glibc's names for its own allocator. The shim's paths are called directly: "malloc" here
 * would bind to the program's own malloc when it has one (see hp_libc_forward). Init comes
 * first (hp_ready), so the first call already knows where to go; a call made during init (by
 * the program's malloc, under the shim's dlsym) gets a bootstrap block, which the forwarding
 * free and realloc recognise. */
int hp_libc_forwarding(void) { return hp_ready() && HP_UNLIKELY(hp_libc_forward()); }

HP_EXPORT void *__libc_malloc(size_t size)
{
    if (hp_libc_forwarding() && hp_be.libc.malloc)
        return hp_be.libc.malloc(size);
    return hp_alloc(size, 0, 0);
}

HP_EXPORT void __libc_free(void *p)
{
    if (hp_libc_forwarding() && hp_be.libc.free && !hp_boot_owns(p)) {
        hp_be.libc.free(p);
        return;
    }
    hp_free(p);
}

HP_EXPORT void *__libc_calloc(size_t n, size_t size)
{
    if (hp_libc_forwarding() && hp_be.libc.calloc)
        return hp_be.libc.calloc(n, size);
    size_t total;
    if (__builtin_mul_overflow(n, size, &total)) {
        errno = ENOMEM;
        return NULL;
    }
    return hp_alloc(total, 0, 1);
}

HP_EXPORT void *__libc_realloc(void *p, size_t size)
{
    if (hp_libc_forwarding() && hp_be.libc.realloc && !hp_boot_owns(p))
        return hp_be.libc.realloc(p, size);
    return hp_realloc(p, size);
}

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
