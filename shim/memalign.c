/* The aligned allocation entry points. Their argument rules follow glibc's memalign
 * (non-power-of-two alignments round up) unless the backend's aligned_alloc is strict C11, in
 * which case aligned_alloc is strict too. */
#include "hp.h"
#include "backend.h"

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <unistd.h>

static void *memalign_impl(size_t align, size_t size)
{
    if (align <= 16)
        return hp_alloc(size, 0, 0);
    if (align > SIZE_MAX / 2 + 1) {
        errno = EINVAL;
        return NULL;
    }
    if (!hp_is_pow2(align))
        align = (size_t)hp_round_pow2(align);
    return hp_alloc(size, align, 0);
}

static size_t page_size(void)
{
    static size_t ps;
    if (!ps)
        ps = (size_t)sysconf(_SC_PAGESIZE);
    return ps;
}

HP_EXPORT void *memalign(size_t align, size_t size) { return memalign_impl(align, size); }
HP_EXPORT void *__libc_memalign(size_t align, size_t size)
{
    if (hp_libc_forwarding() && hp_be.libc.memalign)
        return hp_be.libc.memalign(align, size); /* see __libc_malloc */
    return memalign_impl(align, size);
}

/* Does the backend's aligned_alloc reject an alignment that is not a power of two? Asked with
 * the program's own first such alignment, so an allocator that aborts on it (a debugging one)
 * does so only where it would without the shim. */
static HP_COLD int strict_aligned_alloc(size_t align)
{
    int strict = __atomic_load_n(&hp_be.aligned_alloc_strict, __ATOMIC_RELAXED);
    if (strict >= 0)
        return strict;
    int saved = errno;
    /* A size that is a multiple of the alignment, so a C11-strict allocator objects to the
     * alignment or not at all. */
    void *r = hp_be.aligned_alloc(align, align <= 65536 ? align : 16);
    errno = saved;
    strict = r == NULL;
    if (r)
        hp_be.free(r);
    __atomic_store_n(&hp_be.aligned_alloc_strict, strict, __ATOMIC_RELAXED);
    return strict;
}

HP_EXPORT void *aligned_alloc(size_t align, size_t size)
{
    if (hp_ready() && !hp_is_pow2(align) && strict_aligned_alloc(align)) {
        errno = EINVAL;
        return NULL;
    }
    return memalign_impl(align, size);
}

static int posix_memalign_impl(void **out, size_t align, size_t size);

HP_EXPORT int posix_memalign(void **out, size_t align, size_t size)
{
    return posix_memalign_impl(out, align, size);
}

static int posix_memalign_impl(void **out, size_t align, size_t size)
{
    if (!hp_is_pow2(align) || align % sizeof(void *))
        return EINVAL;
    int saved = errno;
    void *p = memalign_impl(align, size);
    if (!p)
        return ENOMEM;
    errno = saved;
    *out = p;
    return 0;
}

HP_EXPORT int __posix_memalign(void **out, size_t align, size_t size)
{
    if (hp_libc_forwarding() && hp_be.libc.posix_memalign)
        return hp_be.libc.posix_memalign(out, align, size);
    return posix_memalign_impl(out, align, size);
}

HP_EXPORT void *valloc(size_t size) { return memalign_impl(page_size(), size); }

HP_EXPORT void *__libc_valloc(size_t size)
{
    if (hp_libc_forwarding() && hp_be.libc.valloc)
        return hp_be.libc.valloc(size);
    return memalign_impl(page_size(), size);
}

HP_EXPORT void *pvalloc(size_t size)
{
    size_t ps = page_size(), rounded;
    if (__builtin_add_overflow(size, ps - 1, &rounded)) {
        errno = ENOMEM;
        return NULL;
    }
    rounded &= ~(ps - 1);
    return memalign_impl(ps, rounded ? rounded : ps);
}

HP_EXPORT void *__libc_pvalloc(size_t size)
{
    if (hp_libc_forwarding() && hp_be.libc.pvalloc)
        return hp_be.libc.pvalloc(size);
    return pvalloc(size);
}
