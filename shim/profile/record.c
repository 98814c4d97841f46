/* Recording allocations and frees, the shim's hottest code: each event finds its context
 * (site cache, stack walk, the thread's stack caches, the depot) and goes into the thread's
 * cache; events of signal handlers that interrupt one are deferred to it. */
#include "profile/profile_internal.h"

/* Called before a free is applied: if the heap is leaving a new peak, copy every context's
 * live counters now, while they still describe the peak (after a dump being written, as the
 * counters wait for it). */
static inline void peak_check_before_free(struct hp_thread *t)
{
    if (HP_UNLIKELY(__atomic_load_n(&hp_prof.peak_pending, __ATOMIC_RELAXED)) &&
        !__atomic_load_n(&hp_cache_hold, __ATOMIC_ACQUIRE)) {
        if (hp_prof_multi)
            hp_publish(t);
        hp_peak_request_if_pending();
    }
}

/* Only needed with several threads: with one, contexts are brought up to date as a whole
 * (hp_push_all) when the peak is copied, at dumps and when a cache slot is reused. */
static void mark_dirty(struct hp_thread *t, struct tentry *e)
{
    if (hp_prof_multi && !e->dirty) {
        e->dirty = 1;
        if (t->ndirty < HP_DIRTY_MAX)
            t->dirty[t->ndirty++] = (uint32_t)(e - t->entries);
        else
            t->dirty_overflow = 1;
    }
}

static inline uint64_t abs64(int64_t v) { return v < 0 ? (uint64_t)-v : (uint64_t)v; }

/* One thread's unpublished change, to the whole heap or to one context, stays below the
 * slack. With a single thread the heap total is updated at every event (the peak is exact; the
 * totals of allocations and frees wait for the next dump) and the contexts' maxima are exact
 * through base + delta; contexts are pushed in batches. */
static inline void maybe_publish(struct hp_thread *t, struct tentry *e, int grew, uint32_t now_ms)
{
    if (!hp_prof_multi) {
        if (grew) { /* a free cannot raise a maximum */
            int64_t lc = e->base_count + e->d_live_count, ls = e->base_size + e->d_live_size;
            if (lc > e->seen_max_count)
                e->seen_max_count = lc;
            if (ls > e->seen_max_size)
                e->seen_max_size = ls;
        }
        int64_t ds = t->pend_size, dc = t->pend_count;
        t->pend_size = t->pend_count = 0;
        hp_global_live(ds, dc, now_ms);
    } else if (abs64(t->pend_size) >= hp_prof.slack || abs64(e->d_live_size) >= hp_prof.slack) {
        /* Only the slack triggers a push: how many contexts changed does not matter for the
         * accuracy, and pushing touches context lines other threads use. */
        hp_publish(t);
    }
}

/* A block with access figures where the thread has no room for them (no thread cache, no
 * metadata for the figures beside it): straight into the shared table, as a move out of the
 * thread's cache (a dump being written sees it with the rest of the free or not at all). */
static HP_COLD void access_event(uint32_t ctx_id, uint64_t size, uint32_t alloc_ms,
                                 uint32_t alloc_cpu, uint32_t dealloc_ms, uint32_t dealloc_cpu,
                                 const struct hp_access *acc, int moving)
{
    struct hp_block_event e = {size, alloc_ms, dealloc_ms, alloc_cpu, dealloc_cpu,
                               acc->accesses, acc->percent_utilized, acc->writes};
    if (!moving)
        hp_move_begin();
    hp_table_add(ctx_id, &e);
    if (acc->nbins)
        hp_hist_add_bins(ctx_id, NULL, acc->bins, acc->nbins);
    if (!moving)
        hp_move_end();
}

/* The thread's access figures beside its entries, at its first free with figures; 0 without
 * metadata for them. Entries in use before have no figures: all zero, as made. */
static HP_COLD int acc_make(struct hp_thread *t)
{
    t->acc = hp_meta_alloc((t->tmask + 1) * sizeof *t->acc);
    return t->acc != NULL;
}

/* A free without a thread cache (the thread is exiting, or the metadata ran out): straight
 * into the shared table and the context. Out of line: it keeps the common path's frame small. */
static HP_COLD void free_event_direct(uint32_t ctx_id, uint64_t size, uint32_t alloc_ms,
                                      uint32_t alloc_cpu, uint32_t dealloc_ms, uint32_t dealloc_cpu,
                                      const struct hp_access *acc)
{
    struct hp_ctx *c = __atomic_load_n(&hp_prof.by_id[ctx_id], __ATOMIC_ACQUIRE);
    if (!c)
        return;
    hp_move_begin();
    if (acc) {
        access_event(ctx_id, size, alloc_ms, alloc_cpu, dealloc_ms, dealloc_cpu, acc, 1);
    } else {
        struct hp_hib_run r;
        hp_hib_run_reset(&r);
        hp_hib_run_add(&r, size, alloc_ms, dealloc_ms, alloc_cpu, dealloc_cpu);
        hp_table_merge(ctx_id, &r, NULL);
    }
    hp_note_threads();
    if (__atomic_load_n(&hp_prof.peak_pending, __ATOMIC_RELAXED))
        hp_peak_request_if_pending();
    __atomic_fetch_add(&c->live_count, -1, __ATOMIC_RELAXED);
    __atomic_fetch_add(&c->live_size, -(int64_t)size, __ATOMIC_RELAXED);
    __atomic_fetch_add(&c->live_ts, -(int64_t)alloc_ms, __ATOMIC_RELAXED);
    hp_global_live(-(int64_t)size, -1, dealloc_ms);
    hp_add_u64(&hp_prof.total_frees, 1);
    hp_move_end();
}

/* A free (acc: its access figures, NULL for a block without: the common case, which the
 * compiler keeps free of the access code where the argument is a constant NULL). */
static inline __attribute__((always_inline)) void free_event(struct hp_thread *t, uint32_t ctx_id,
                                                             uint64_t size, uint32_t alloc_ms,
                                                             uint32_t alloc_cpu, uint32_t dealloc_ms,
                                                             uint32_t dealloc_cpu,
                                                             const struct hp_access *acc)
{
    if (HP_UNLIKELY(!t)) {
        free_event_direct(ctx_id, size, alloc_ms, alloc_cpu, dealloc_ms, dealloc_cpu, acc);
        return;
    }
    peak_check_before_free(t);
    struct tentry *e = hp_entry_for(t, NULL, ctx_id);
    if (!e)
        return;
    hp_snap_entry(e);
    if (HP_UNLIKELY(acc != NULL) && HP_UNLIKELY(!t->acc) && !acc_make(t)) {
        /* No room for figures beside the entry: this block goes to the table alone. */
        access_event(ctx_id, size, alloc_ms, alloc_cpu, dealloc_ms, dealloc_cpu, acc, 0);
    } else {
        if (HP_UNLIKELY(acc != NULL))
            acc_run_add(ctx_id, &t->acc[e - t->entries], acc);
        hp_hib_run_add(&e->hib, size, alloc_ms, dealloc_ms, alloc_cpu, dealloc_cpu);
    }
    e->d_live_count--;
    e->d_live_size -= (int64_t)size;
    e->d_live_ts -= alloc_ms;
    mark_dirty(t, e);
    t->pend_size -= (int64_t)size;
    t->pend_count--;
    t->frees++;
    maybe_publish(t, e, 0, dealloc_ms);
}

/* Record allocation of size from context id (c: the context if the caller has it) in the
 * thread's cache; 0 if the context has no entry (cannot happen: the id came from the depot). */
static inline __attribute__((always_inline)) int alloc_event(struct hp_thread *t, struct hp_ctx *c,
                                                             uint32_t id, uint64_t size,
                                                             uint32_t now_ms)
{
    struct tentry *e = hp_entry_for(t, c, id);
    if (HP_UNLIKELY(!e))
        return 0;
    hp_snap_entry(e);
    e->d_allocs++;
    e->d_bytes += size;
    e->d_live_count++;
    e->d_live_size += (int64_t)size;
    e->d_live_ts += now_ms;
    /* The clock never goes back within a thread. */
    if (e->d_allocs == 1)
        e->first_ms = now_ms;
    e->last_ms = now_ms;
    if (size < e->d_min_size)
        e->d_min_size = size;
    if (size > e->d_max_size)
        e->d_max_size = size;
    mark_dirty(t, e);
    t->pend_size += (int64_t)size;
    t->pend_count++;
    t->allocs++;
    t->bytes += size;
    maybe_publish(t, e, 1, now_ms);
    return 1;
}

/* Apply the events signal handlers left (with the thread's lock held, inside the shim), oldest
 * first: a block a handler allocated may be freed by a later handler, or by the very call that
 * applies them (which applies them before its own free). A handler that comes meanwhile adds
 * to the end; the list is emptied only when nothing came since the last look. */
HP_COLD void hp_run_deferred(struct hp_thread *t)
{
    uint32_t head = 0;
    for (;;) {
        uint32_t n = __atomic_load_n(&t->ndef, __ATOMIC_ACQUIRE);
        if (head < n) {
            struct deferred d = t->def[head++];
            if (d.kind == DEF_ALLOC) {
                if (!alloc_event(t, NULL, d.ctx, d.size, d.alloc_ms))
                    hp_count(&hp_counters.unprofiled_allocs);
            } else {
                free_event(t, d.ctx, d.size, d.alloc_ms, d.alloc_cpu, d.dealloc_ms, d.dealloc_cpu,
                           d.kind == DEF_FREE_ACCESS ? &d.acc : NULL);
            }
            continue;
        }
        if (__atomic_compare_exchange_n(&t->ndef, &n, 0, 0, __ATOMIC_ACQ_REL, __ATOMIC_RELAXED))
            return;
    }
}

/* Leave an event for the interrupted call (from a signal handler, which the interrupted code
 * cannot run during; a handler interrupting this one may add its own between the write and the
 * count, and then this one goes after it). 0 when the list is full. */
static int defer_event(struct hp_thread *t, const struct deferred *d)
{
    for (;;) {
        uint32_t n = __atomic_load_n(&t->ndef, __ATOMIC_ACQUIRE);
        if (n >= HP_DEFER_MAX)
            return 0;
        t->def[n] = *d;
        __atomic_signal_fence(__ATOMIC_SEQ_CST);
        if (__atomic_compare_exchange_n(&t->ndef, &n, n + 1, 0, __ATOMIC_ACQ_REL, __ATOMIC_RELAXED))
            return 1;
    }
}

uint32_t hp_profile_alloc(uint64_t size, uint32_t now_ms, uint32_t cpu)
{
    return hp_profile_alloc_at(size, now_ms, cpu, 0);
}

/* An allocation by a signal handler that interrupted this thread while it recorded an
 * allocation or free of its own (the thread's walk cache, stack caches and context entries are
 * in the middle of being used): its stack is walked afresh into a buffer of its own, its
 * context found in the depot (without the thread's caches) and the rest left for the
 * interrupted call (defer_event). Returns the context id for the header, 0 if the allocation
 * cannot be recorded (the shim's own work made it, a handler interrupted this one, the stack
 * cannot be walked here, the list of deferred events is full): then its free is not recorded
 * either. */
static HP_COLD uint32_t nested_alloc(uint64_t size, uint32_t now_ms, uint32_t cpu, uintptr_t frame)
{
    struct hp_tls *tl = &hp_tls;
    struct hp_thread *t = tl->thread;
    if (tl->depth != HP_DEPTH_EVENT || !t || t->nested)
        return 0;
    t->nested = 1;
    __atomic_signal_fence(__ATOMIC_SEQ_CST);
    uint32_t id = 0;
    int truncated = 0;
    const uintptr_t *frames;
    uint64_t h;
    int n = hp_stack_capture_nested(t->npcs, (int)hp_opt.stack_depth, &truncated, &frames, &h, frame);
    if (n >= 0) {
        struct hp_ctx *c = hp_depot_get(frames, n, h, 1);
        struct deferred d = {DEF_ALLOC, c ? c->id : 0, now_ms, cpu, 0, 0, size, {0}};
        if (c && defer_event(t, &d)) {
            id = c->id;
            if (truncated)
                hp_count(&hp_counters.truncated_stacks);
        }
    }
    __atomic_signal_fence(__ATOMIC_SEQ_CST);
    t->nested = 0;
    return id;
}

/* The context of the stack from frame, walked into pcs (at most max frames) and looked up in
 * the thread's stack caches, then the depot: its id (and *c, when the depot gave it), or 0
 * when the depot has no room. A stack the thread's caches knew (it came before) goes into
 * its site cache; one seen for the first time may never come again (a program's start, a
 * recursion of changing depth): it goes in the next time. */
static inline __attribute__((always_inline)) uint32_t find_context(struct hp_thread *t, uintptr_t *pcs,
                                                                   int max, int *truncated,
                                                                   uintptr_t frame, struct hp_ctx **c)
{
    const uintptr_t *frames;
    uint64_t h;
    int n = hp_stack_capture(pcs, max, truncated, t ? &t->walk : NULL, &frames, &h, frame);
    uint32_t id, seen = 1;
    struct scache_entry *re = t ? &t->recent[h >> (64 - HP_RECENT_LOG)] : NULL;
    if (re && re->hash == h && re->id) {
        id = re->id;
    } else {
        struct scache_entry *se = t ? t->scache[(h ^ (h >> 32)) & t->smask] : NULL;
        if (se && se[0].hash == h && se[0].id) {
            id = se[0].id;
        } else if (se && se[1].hash == h && se[1].id) {
            struct scache_entry hit = se[1];
            se[1] = se[0];
            se[0] = hit;
            id = hit.id;
        } else {
            *c = hp_depot_get(frames, n, h, 0);
            if (HP_UNLIKELY(!*c)) {
                if (t)
                    hp_cfi_site_done(&t->walk, 0);
                return 0;
            }
            id = (*c)->id;
            seen = 0;
            if (se) {
                se[1] = se[0];
                se[0] = (struct scache_entry){h, id, 0};
                if (HP_UNLIKELY(++t->smisses > t->smask + 1) && t->smask < HP_SCACHE_SETS - 1)
                    hp_grow_scache(t);
            }
        }
        if (re)
            *re = (struct scache_entry){h, id, 0};
    }
    if (t)
        hp_cfi_site_done(&t->walk, seen ? id : 0);
    return id;
}

HP_HOT uint32_t hp_profile_alloc_at(uint64_t size, uint32_t now_ms, uint32_t cpu, uintptr_t frame)
{
    struct hp_tls *tl = &hp_tls;
    if (tl->depth) {
        uint32_t id = nested_alloc(size, now_ms, cpu, frame);
        if (!id)
            hp_count(&hp_counters.unprofiled_allocs);
        return id;
    }
    tl->depth = HP_DEPTH_EVENT;
    /* The frame buffer lives in the thread's state, not on the stack: allocations happen on
     * small stacks too (sigaltstack handlers, PTHREAD_STACK_MIN threads). */
    struct hp_thread *t = hp_thread_get();
    /* Without a thread cache: 16 frames, with room for those an unwinder writes before it
     * drops the shim's own (hp_stack_capture). */
    uintptr_t small[16 + HP_STACK_SLACK];
    uintptr_t *pcs = t ? t->pcs : small;
    int max = t ? (int)hp_opt.stack_depth : 16;
    int truncated = 0;
    struct hp_ctx *c = NULL;
    /* A stack the thread allocated from before: its context without a walk. */
    uint32_t id = t ? hp_stack_site_find(&t->walk, frame, &truncated) : 0;
    if (!id)
        id = find_context(t, pcs, max, &truncated, frame, &c);
    /* A truncated stack is counted in the thread's cache, with its allocation (a program
     * whose stacks are all deeper than stack_depth would otherwise pay a locked addition to
     * one shared line on every allocation). */
    if (truncated && (HP_UNLIKELY(!id) || !t))
        hp_count(&hp_counters.truncated_stacks);
    if (HP_UNLIKELY(!id)) {
        hp_count(&hp_counters.unprofiled_allocs);
        tl->depth = 0;
        return 0;
    }
    if (HP_LIKELY(t != NULL)) {
        int fast = hp_olock_own(&t->lock);
        if (HP_UNLIKELY(!alloc_event(t, c, id, size, now_ms))) {
            hp_olock_disown(&t->lock, fast);
            if (truncated)
                hp_count(&hp_counters.truncated_stacks);
            hp_count(&hp_counters.unprofiled_allocs);
            tl->depth = 0;
            return 0;
        }
        t->truncs += truncated != 0; /* (published with t->allocs) */
        if (t->ndef)
            hp_run_deferred(t);
        hp_olock_disown(&t->lock, fast);
    } else {
        hp_note_threads();
        hp_move_begin();
        __atomic_fetch_add(&c->allocs, 1, __ATOMIC_RELAXED);
        __atomic_fetch_add(&c->bytes, size, __ATOMIC_RELAXED);
        __atomic_fetch_add(&c->live_count, 1, __ATOMIC_RELAXED);
        int64_t ls = __atomic_add_fetch(&c->live_size, (int64_t)size, __ATOMIC_RELAXED);
        __atomic_fetch_add(&c->live_ts, (int64_t)now_ms, __ATOMIC_RELAXED);
        hp_max_u64(&c->max_live_size, (uint64_t)ls);
        hp_min_u32(&c->first_alloc_ms, now_ms);
        hp_max_u32(&c->last_alloc_ms, now_ms);
        hp_min_u64(&c->min_size, size);
        hp_max_u64(&c->max_size, size);
        hp_global_live((int64_t)size, 1, now_ms);
        hp_add_u64(&hp_prof.total_allocs, 1);
        hp_add_u64(&hp_prof.total_bytes, size);
        hp_move_end();
    }
    (void)cpu;
    tl->depth = 0;
    if (HP_UNLIKELY(hp_dump_pending))
        hp_run_pending();
    return id;
}

/* The free of a profiled block (acc: as for free_event). */
static inline __attribute__((always_inline)) void profile_free(uint32_t ctx, uint64_t size,
                                                               uint32_t alloc_ms, uint32_t alloc_cpu,
                                                               const struct hp_access *acc)
{
    struct hp_tls *tl = &hp_tls;
    if (ctx >= hp_prof.max_id)
        return;
    struct hp_thread *pt = tl->thread;
    if (HP_LIKELY(pt != NULL)) {
        /* The entry's two lines are seldom in the first-level cache: ask for them now, and
         * the clock and cpu reads below overlap the wait. (Only this thread changes where its
         * entries are; a stale address would cost nothing but the prefetch.) */
        const char *pe = (const char *)&pt->entries[hp_entry_slot(ctx, pt->tmask)];
        __builtin_prefetch(pe, 1);
        __builtin_prefetch(pe + HP_CACHELINE, 1);
    }
    uint32_t now = hp_now_ms(), cpu = hp_cpu();
    if (tl->depth) {
        /* A signal handler freeing while this thread is inside the shim: leave the event
         * for the interrupted call to apply when it finishes. */
        struct hp_thread *t = tl->thread;
        struct deferred d = {acc ? DEF_FREE_ACCESS : DEF_FREE, ctx, alloc_ms, alloc_cpu, now, cpu,
                             size, {0}};
        if (acc)
            d.acc = *acc;
        if (t)
            defer_event(t, &d);
        return; /* more than HP_DEFER_MAX deferred events: the event is dropped */
    }
    tl->depth = HP_DEPTH_EVENT;
    struct hp_thread *t = hp_thread_get();
    if (t) {
        int fast = hp_olock_own(&t->lock);
        /* First what handlers left: the block may be one a handler allocated. */
        if (HP_UNLIKELY(t->ndef))
            hp_run_deferred(t);
        free_event(t, ctx, size, alloc_ms, alloc_cpu, now, cpu, acc);
        if (t->ndef)
            hp_run_deferred(t);
        hp_olock_disown(&t->lock, fast);
    } else {
        free_event(NULL, ctx, size, alloc_ms, alloc_cpu, now, cpu, acc);
    }
    tl->depth = 0;
    if (HP_UNLIKELY(hp_dump_pending))
        hp_run_pending();
}

HP_HOT void hp_profile_free(uint32_t ctx, uint64_t size, uint32_t alloc_ms, uint32_t alloc_cpu)
{
    profile_free(ctx, size, alloc_ms, alloc_cpu, NULL);
}

void hp_profile_free_access(uint32_t ctx, uint64_t size, uint32_t alloc_ms, uint32_t alloc_cpu,
                            const struct hp_access *a)
{
    profile_free(ctx, size, alloc_ms, alloc_cpu, a);
}
