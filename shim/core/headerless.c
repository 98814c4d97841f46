/* Blocks of an allocator profiled without headers (hp_be.headerless): the shim hands out the
 * allocator's own pointers untouched and keeps each block by address in a table of
 * pool_table.c, so a free through a path the patch does not see harms nothing. */
#include "core/core.h"
#include "core/core_internal.h"
#include "core/header_internal.h"
#include "core/pool_internal.h"
#include "backend/backend.h"
#include "profile/profile.h"
#include "rt/rt.h"

#include <errno.h>

int hp_headerless;

/* Recording on this thread: the profiler's own allocations meanwhile (a stack walk's) and a
 * signal handler's are not kept (their frees are then addresses the table does not know). */
static __thread int busy;

static inline int recording(void) { return hp_profiling && !busy; }

void hp_hl_alloc(void *p, size_t size, uintptr_t frame)
{
    if (!p || !recording() || size > HP_MAX_REQUEST)
        return;
    int saved = errno;
    busy = 1;
    /* A block already at that address was freed through a path the patch does not see: its
     * life ends here, at the reuse. */
    if (hp_pobj_alloc(&hp_headerless_blocks, 0, (uintptr_t)p, size, frame, 0) == 2)
        hp_count(&hp_counters.headerless_unseen_frees);
    busy = 0;
    errno = saved;
}

void hp_hl_free(void *p)
{
    if (!p || !recording())
        return;
    int saved = errno;
    busy = 1;
    struct hp_pool_obj o;
    if (hp_ptab_remove(&hp_headerless_blocks, (uintptr_t)p, &o))
        hp_pobj_free(&o);
    busy = 0;
    errno = saved;
}

/* realloc through the allocator's own function: the old block (taken out of the table first,
 * so no other thread's block at that address is taken for it) is freed and the new one
 * allocated; when realloc failed the old block is live still and goes back. p is not NULL
 * (hp_realloc makes realloc(NULL, n) an allocation). */
void *hp_hl_realloc(void *p, size_t size, uintptr_t frame)
{
    if (!hp_be.realloc)
        return NULL;
    if (!recording())
        return hp_be.realloc(p, size);
    busy = 1;
    struct hp_pool_obj o;
    int had = hp_ptab_remove(&hp_headerless_blocks, (uintptr_t)p, &o);
    busy = 0;
    void *n = hp_be.realloc(p, size);
    int saved = errno;
    busy = 1;
    if (!n && !(size == 0 && hp_realloc_zero_frees)) {
        struct hp_pool_obj old;
        if (had)
            hp_ptab_insert(&hp_headerless_blocks, &o, &old);
    } else if (had) {
        hp_pobj_free(&o);
    }
    busy = 0;
    errno = saved;
    if (n)
        hp_hl_alloc(n, size, frame);
    return n;
}
