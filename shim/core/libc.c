/* glibc's names for its own allocator (__libc_malloc, __libc_memalign, ...): glibc's own
 * functions when an allocator sits in front of the shim, the shim's paths otherwise. */
#include "core/core.h"
#include "backend/backend.h"
#include "bootstrap/bootstrap.h"
#include "rt/rt.h"

/* The shim's paths are called directly: "malloc" here would bind to the program's own malloc
 * when it has one (see hp_libc_forward). Init comes first (hp_ready), so the first call already
 * knows where to go; a call made during init (by the program's malloc, under the shim's dlsym)
 * gets a bootstrap block, which the forwarding free and realloc recognise. */
/* The __libc_* entry points go to glibc's own functions when an allocator sits in front of the
 * shim (hp_libc_forward), once init has run (it runs now if it has not). */
static int hp_libc_forwarding(void) { return hp_ready() && HP_UNLIKELY(hp_libc_forward()); }

void *hp_libc_malloc(size_t size)
{
    if (hp_libc_forwarding() && hp_be.libc.malloc)
        return hp_be.libc.malloc(size);
    return hp_alloc(size, 0, 0);
}

void hp_libc_free(void *p)
{
    if (hp_libc_forwarding() && hp_be.libc.free && !hp_boot_owns(p)) {
        hp_be.libc.free(p);
        return;
    }
    hp_free(p);
}

void *hp_libc_calloc(size_t n, size_t size)
{
    if (hp_libc_forwarding() && hp_be.libc.calloc)
        return hp_be.libc.calloc(n, size);
    return hp_calloc(n, size);
}

void *hp_libc_realloc(void *p, size_t size)
{
    if (hp_libc_forwarding() && hp_be.libc.realloc && !hp_boot_owns(p))
        return hp_be.libc.realloc(p, size);
    return hp_realloc(p, size);
}

void *hp_libc_memalign(size_t align, size_t size)
{
    if (hp_libc_forwarding() && hp_be.libc.memalign)
        return hp_be.libc.memalign(align, size);
    return hp_memalign(align, size);
}

int hp_libc_posix_memalign(void **out, size_t align, size_t size)
{
    if (hp_libc_forwarding() && hp_be.libc.posix_memalign)
        return hp_be.libc.posix_memalign(out, align, size);
    return hp_posix_memalign(out, align, size);
}

void *hp_libc_valloc(size_t size)
{
    if (hp_libc_forwarding() && hp_be.libc.valloc)
        return hp_be.libc.valloc(size);
    return hp_valloc(size);
}

void *hp_libc_pvalloc(size_t size)
{
    if (hp_libc_forwarding() && hp_be.libc.pvalloc)
        return hp_be.libc.pvalloc(size);
    return hp_pvalloc(size);
}
