/* jemalloc's extended API (mallocx and friends), for programs written against it: its flags
 * decoded onto the shim's paths. A program linked with jemalloc may call sallocx or sdallocx on
 * a block that malloc returned; the shim made that block, so these must go through the shim
 * too, or the allocator receives a pointer into the middle of one of its blocks. jemalloc's
 * arena and thread-cache flags reach the backend's mallocx/dallocx when it has them; blocks the
 * shim did not make go to the backend's own functions. */
#include "core/core.h"
#include "core/core_internal.h"
#include "core/header_internal.h"
#include "backend/backend.h"
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

void *hp_mallocx(size_t size, int flags)
{
    size_t align = flags_align(flags);
    return hp_alloc_x(size, align > 16 ? align : 0, (flags & HP_MALLOCX_ZERO) != 0, flags & EXTRA_MASK);
}

void hp_dallocx(void *p, int flags) { hp_free_x(p, flags & TCACHE_MASK); }

void *hp_rallocx(void *p, size_t size, int flags)
{
    if (!p)
        return hp_mallocx(size, flags);
    if (!hp_owns(p))
        return hp_be.rallocx ? hp_be.rallocx(p, size, flags) : NULL;
    size_t align = flags_align(flags);
    if (align <= 16 && !(flags & (HP_MALLOCX_ZERO | EXTRA_MASK)))
        return hp_realloc(p, size ? size : 1); /* rallocx never frees */
    /* A new block with the requested properties; bytes past the old block's usable size
     * stay zero under MALLOCX_ZERO, as jemalloc documents. */
    size_t old = hp_usable_size(p);
    void *n = hp_mallocx(size, flags);
    if (!n)
        return NULL;
    memcpy(n, p, old < size ? old : size);
    hp_free_x(p, flags & TCACHE_MASK);
    return n;
}

size_t hp_xallocx(void *p, size_t size, size_t extra, int flags)
{
    if (p && !hp_owns(p) && hp_be.xallocx)
        return hp_be.xallocx(p, size, extra, flags);
    /* A block of the shim's cannot change size in place; the answer is its usable size, which
     * is what xallocx returns when it cannot resize. */
    return hp_usable_size(p);
}

/* What mallocx(size, flags) gives at least. */
size_t hp_nallocx(size_t size, int flags)
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
