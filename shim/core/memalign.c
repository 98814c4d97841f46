/* The aligned allocations (memalign, aligned_alloc, posix_memalign, valloc, pvalloc): their
 * rules for alignments that are 0 or not a power of two, then a block of the shim's with the
 * alignment rounded up. */
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

void *hp_memalign(size_t align, size_t size)
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

/* aligned_alloc's own rules, whatever memalign's are: the allocator's aligned_alloc is asked
 * (backend_refuses); without one to ask, C11's when an allocator of the program's is in front
 * of the shim, glibc's otherwise. */
void *hp_aligned_alloc(size_t align, size_t size)
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

int hp_posix_memalign(void **out, size_t align, size_t size)
{
    if (!hp_is_pow2(align) || align % sizeof(void *))
        return EINVAL;
    int saved = errno;
    void *p = hp_memalign(align, size);
    if (!p)
        return ENOMEM;
    errno = saved;
    *out = p;
    return 0;
}

void *hp_valloc(size_t size) { return hp_memalign(page_size(), size); }

void *hp_pvalloc(size_t size)
{
    size_t ps = page_size(), rounded;
    if (__builtin_add_overflow(size, ps - 1, &rounded)) {
        errno = ENOMEM;
        return NULL;
    }
    rounded &= ~(ps - 1);
    return hp_memalign(ps, rounded ? rounded : ps);
}
