/* The pool API of heapprof.h: objects a program carves out of its own pools, reported by
 * address and size. They have no shim header, so they are kept in an address-keyed table
 * (pool_table.c); otherwise they are profiled as blocks are: a context from the stack of the
 * report call, lifetimes, the live heap and its peak, leaks, access counts from the shadow. */
#include "core/core.h"
#include "core/core_internal.h"
#include "core/header_internal.h"
#include "core/pool_internal.h"
#include "profile/profile.h"
#include "shadow/shadow.h"
#include "rt/rt.h"

#include <errno.h>

/* A report on this thread is in the table: a signal handler that reports too must not wait for
 * the shard lock its thread may hold (it is counted as dropped instead). */
static __thread int busy;

/* Objects whose report came when the shim cannot profile them are not kept: their frees are
 * then unknown addresses, and counted as such, but the program never notices. */
static inline int usable(void)
{
    return hp_ready() && (!hp_passthrough || hp_headerless) && hp_profiling;
}

/* The start of every report: 1 when it goes on (busy is then set and the caller restores errno
 * and clears busy on its way out), 0 when it is ignored (a null address, the shim not
 * profiling) or dropped (a report inside a report on this thread, or a size no block can have). */
static inline int report_enter(uintptr_t addr, size_t size)
{
    if (!addr || !usable())
        return 0;
    if (busy || size > HP_MAX_REQUEST) {
        hp_count(&hp_counters.pool_dropped);
        return 0;
    }
    busy = 1;
    return 1;
}

/* Access profiling. The shadow's registry wants 32-byte aligned pointers and the shadow counts
 * per 64-byte granule: an object is registered from its address rounded down to 32, with its
 * size grown by as much, which covers exactly the same granules. Objects not 32-byte aligned
 * may share a granule (and its counter) with a neighbour: each then sees the other's accesses
 * to it, and clearing one's counters at allocation clears the other's share (docs/USAGE.md). */
static inline uintptr_t acc_base(uintptr_t a) { return a & ~(uintptr_t)31; }
static inline uint64_t acc_size(uintptr_t a, uint64_t size) { return size + (a & 31); }

void hp_pobj_free(const struct hp_pool_obj *o)
{
    if (!o->ctx || !hp_profiling)
        return;
    if (HP_UNLIKELY(hp_shadow_on())) {
        struct hp_header h = {0};
        h.size_cpu = acc_size(o->addr, o->size);
        h.context_id = o->ctx;
        h.live_ref = o->live_ref;
        h.alloc_ms = o->alloc_ms;
        struct hp_access acc;
        hp_access_take(acc_base(o->addr), &h, &acc);
        hp_profile_free_access(o->ctx, o->size, o->alloc_ms, o->cpu, &acc);
    } else {
        hp_profile_free(o->ctx, o->size, o->alloc_ms, o->cpu);
    }
}

int hp_pobj_alloc(struct hp_ptab *t, uintptr_t pool, uintptr_t addr, uint64_t size, uintptr_t frame,
                  uint32_t ctx_flag)
{
    struct hp_pool_obj o = {addr, pool, size, 0, hp_now_ms(), hp_cpu(), 0};
    o.ctx = hp_profile_alloc_at(size, o.alloc_ms, o.cpu, frame);
    if (o.ctx && ctx_flag)
        hp_profile_ctx_flag(o.ctx, ctx_flag);
    if (HP_UNLIKELY(hp_shadow_on()))
        o.live_ref = hp_access_alloc(acc_base(addr), acc_size(addr, size), o.ctx);
    struct hp_pool_obj old;
    int r = hp_ptab_insert(t, &o, &old);
    if (r == 0)
        hp_pobj_free(&o); /* its free could never be matched: not counted */
    else if (r == 2)
        hp_pobj_free(&old);
    return r;
}

/* The allocation report's work; frame: a frame of the shim's on this stack, where the walk to
 * the program's report call starts. Reported again without a free: the earlier object's life
 * ends here. */
static void obj_alloc(uintptr_t pool, uintptr_t addr, uint64_t size, uintptr_t frame)
{
    if (hp_pobj_alloc(&hp_pool_objs, pool, addr, size, frame, HPF_LIVE_POOL) == 0)
        hp_count(&hp_counters.pool_dropped);
}

void hp_pool_alloc(uintptr_t pool, uintptr_t addr, size_t size)
{
    int saved = errno;
    if (!report_enter(addr, size))
        return;
    obj_alloc(pool, addr, size, (uintptr_t)__builtin_frame_address(0));
    busy = 0;
    errno = saved;
}

void hp_pool_free(uintptr_t addr)
{
    int saved = errno;
    if (!report_enter(addr, 0))
        return;
    struct hp_pool_obj o;
    if (hp_ptab_remove(&hp_pool_objs, addr, &o))
        hp_pobj_free(&o);
    else
        hp_count(&hp_counters.pool_unknown_frees);
    busy = 0;
    errno = saved;
}

/* A resize in place ends the object's life at its old size and starts one at the new size,
 * from the stack of this call: what realloc does to a block of the shim's. */
void hp_pool_resize(uintptr_t addr, size_t size)
{
    int saved = errno;
    if (!report_enter(addr, size))
        return;
    struct hp_pool_obj o;
    if (hp_ptab_remove(&hp_pool_objs, addr, &o)) {
        hp_pobj_free(&o);
        obj_alloc(o.pool, addr, size, (uintptr_t)__builtin_frame_address(0));
    } else {
        hp_count(&hp_counters.pool_unknown_frees);
    }
    busy = 0;
    errno = saved;
}

/* Nothing to set up: a pool is only the handle its objects carry. Kept so that code written for
 * Valgrind's CREATE_MEMPOOL has its counterpart; it makes sure the shim is initialised. */
void hp_pool_create(uintptr_t pool)
{
    (void)pool;
    hp_ready();
}

/* Every object still reported for pool is freed, 64 at a time out of the table's locks. The
 * whole table is walked: meant for pools that go away now and then, not for every request. */
void hp_pool_destroy(uintptr_t pool)
{
    int saved = errno;
    if (!report_enter(pool, 0))
        return;
    struct hp_pool_obj batch[64];
    unsigned cursor = 0;
    size_t n;
    while ((n = hp_ptab_take_pool(&hp_pool_objs, pool, &cursor, batch, sizeof batch / sizeof batch[0])) > 0)
        for (size_t i = 0; i < n; i++)
            hp_pobj_free(&batch[i]);
    busy = 0;
    errno = saved;
}
