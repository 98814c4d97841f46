/* The aligned allocation entry points. An alignment that is 0 or not a power of two gets the
 * answer the allocator under the shim gives (its memalign or aligned_alloc is asked: glibc
 * 2.36 rounds such alignments up and takes 0 as malloc, jemalloc refuses them, mimalloc
 * refuses some by size, C11-strict aligned_allocs refuse them); a block is then made by the
 * shim with the alignment rounded up. */
#include "core/core.h"
#include "backend/backend.h"
#include "rt/rt.h"

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <unistd.h>

/* Would the allocator refuse this call of its memalign or aligned_alloc (fn), whose alignment
 * is 0 or not a power of two? glibc 2.36 takes such alignments (0 as malloc, the others rounded
 * up); jemalloc refuses them; mimalloc refuses 0 or not depending on the size; C11-strict
 * aligned_allocs refuse them. So the allocator is asked the program's own question (such calls
 * are rare): a refusal is the answer, with the errno the allocator set (one that aborts on it
 * does so where it would without the shim); a block is given back and the shim makes its own.
 * An allocator in front of the shim is asked too (its original code): that is the call the
 * program made. */
static HP_COLD int backend_refuses(void *(*fn)(size_t, size_t), size_t align, size_t size)
{
    int saved = errno;
    errno = 0;
    void *r = fn(align, size);
    if (r) {
        hp_be.free(r);
        errno = saved;
        return 0;
    }
    if (!errno)
        errno = saved;
    return 1;
}

/* May the allocator be asked (backend_refuses)? Not before init, nor one in front of the shim
 * that the shim only forwards to (Chromium's PartitionAlloc, which traps on such alignments: the
 * program's calls reach it directly, and what reaches the shim's entry points it is not asked;
 * glibc's rules for memalign there, C11's for aligned_alloc). */
static int may_ask(void) { return hp_ready() && !(hp_be.in_front && hp_passthrough); }

/* A block for the alignment (up to 16: a plain one), rounded up to a power of two. */
static void *aligned_core(size_t align, size_t size)
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

static void *memalign_impl(size_t align, size_t size)
{
    if (HP_UNLIKELY(!hp_is_pow2(align)) && may_ask() && hp_be.memalign &&
        !hp_be.memalign_takes_any && backend_refuses(hp_be.memalign, align, size))
        return NULL;
    return aligned_core(align, size);
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

/* aligned_alloc's own rules, whatever memalign's are: the allocator's aligned_alloc is asked
 * (backend_refuses); without one to ask, C11's when an allocator of the program's is in front
 * of the shim, glibc's otherwise. */
HP_EXPORT void *aligned_alloc(size_t align, size_t size)
{
    if (HP_UNLIKELY(!hp_is_pow2(align)) && hp_ready()) {
        if (hp_be.aligned_alloc && may_ask()) {
            if (backend_refuses(hp_be.aligned_alloc, align, size))
                return NULL;
        } else if (hp_be.in_front) {
            errno = EINVAL;
            return NULL;
        }
    }
    return aligned_core(align, size);
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
