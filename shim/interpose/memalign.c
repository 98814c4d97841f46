/* The aligned allocation entry points and glibc's __libc_* names for them: each a one-line
 * forward into core/memalign.c and core/libc.c. */
#include "core/core.h"
#include "rt/rt.h"

HP_EXPORT void *memalign(size_t align, size_t size) { return hp_memalign(align, size); }
HP_EXPORT void *aligned_alloc(size_t align, size_t size) { return hp_aligned_alloc(align, size); }
HP_EXPORT int posix_memalign(void **out, size_t align, size_t size)
{
    return hp_posix_memalign(out, align, size);
}
HP_EXPORT void *valloc(size_t size) { return hp_valloc(size); }
HP_EXPORT void *pvalloc(size_t size) { return hp_pvalloc(size); }

HP_EXPORT void *__libc_memalign(size_t align, size_t size) { return hp_libc_memalign(align, size); }
HP_EXPORT int __posix_memalign(void **out, size_t align, size_t size)
{
    return hp_libc_posix_memalign(out, align, size);
}
HP_EXPORT void *__libc_valloc(size_t size) { return hp_libc_valloc(size); }
HP_EXPORT void *__libc_pvalloc(size_t size) { return hp_libc_pvalloc(size); }
