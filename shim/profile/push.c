/* Moving a thread cache's changes out: its entries' live and allocation counters to their
 * contexts, their HIBs to the shared table, its totals to hp_prof (and the peak). */
#include "profile/profile_internal.h"

/* Add entry e's pending live and allocation counters to its context c, and the largest live
 * values e has seen (its own and the context's after the addition) to the context's maxima;
 * e itself is left as it is. *lc, *ls: the context's live counters after the addition (only
 * when e had live changes: returns 1). */
int hp_add_to_context(struct hp_ctx *c, const struct tentry *e, int64_t *lc, int64_t *ls)
{
    int64_t max_count = e->seen_max_count, max_size = e->seen_max_size;
    int live = e->d_live_count || e->d_live_size || e->d_live_ts;
    if (live) {
        hp_add_i64(&c->live_count, e->d_live_count);
        if (hp_prof_multi)
            *ls = __atomic_add_fetch(&c->live_size, e->d_live_size, __ATOMIC_RELAXED);
        else
            *ls = c->live_size += e->d_live_size;
        hp_add_i64(&c->live_ts, e->d_live_ts);
        *lc = __atomic_load_n(&c->live_count, __ATOMIC_RELAXED);
        if (*lc > max_count)
            max_count = *lc;
        if (*ls > max_size)
            max_size = *ls;
    }
    if (max_count > 0)
        hp_max_u64(&c->max_live_count, (uint64_t)max_count);
    if (max_size > 0)
        hp_max_u64(&c->max_live_size, (uint64_t)max_size);
    if (e->d_allocs) {
        hp_add_u64(&c->allocs, e->d_allocs);
        hp_add_u64(&c->bytes, e->d_bytes);
        hp_min_u32(&c->first_alloc_ms, e->first_ms);
        hp_max_u32(&c->last_alloc_ms, e->last_ms);
        hp_min_u64(&c->min_size, e->d_min_size);
        hp_max_u64(&c->max_size, e->d_max_size);
    }
    return live;
}

void hp_push_entry_live(struct tentry *e)
{
    struct hp_ctx *c = hp_entry_ctx(e);
    hp_snap_entry(e);
    int64_t lc, ls;
    if (hp_add_to_context(c, e, &lc, &ls)) {
        if (lc > e->seen_max_count)
            e->seen_max_count = lc;
        if (ls > e->seen_max_size)
            e->seen_max_size = ls;
        e->base_count = lc;
        e->base_size = ls;
        e->d_live_count = e->d_live_size = e->d_live_ts = 0;
    }
    if (e->d_allocs) {
        e->d_allocs = e->d_bytes = e->d_max_size = 0;
        e->d_min_size = UINT64_MAX;
        e->first_ms = UINT32_MAX;
        e->last_ms = 0;
    }
    e->dirty = 0;
}

/* Push an entry's live and allocation counters to its context, and with hib the HIB of its
 * frees to the shared table as well. Pushes between dumps leave the HIB in the cache (merged
 * when the entry is flushed); a push between a dump's flush of the thread and its hold must
 * take it along: the dump reads a context's allocs and live_count and its HIBs as one moment,
 * and with the counters alone it would see blocks gone from live_count whose frees were in no
 * HIB, a context's alloc_count short of its allocs (the test busy-dumps). Since other threads'
 * pushes wait out the flush too (hp_moves_held), only a push that began before the flush and
 * the flush's own see the flag. */
static void push_entry(struct hp_thread *t, struct tentry *e, int hib)
{
    hp_push_entry_live(e);
    if (hib && e->hib.alloc_count) {
        struct acc_run *ar = t->acc ? &t->acc[e - t->entries] : NULL;
        hp_table_merge(e->ctx_id, &e->hib, ar);
        hp_hib_run_reset(&e->hib);
        if (ar)
            acc_run_clear(ar);
    }
}

/* Push the thread's pending live-heap changes to the contexts and the global totals. */
void hp_push_all(struct hp_thread *t)
{
    int hib = __atomic_load_n(&hp_cache_flushing, __ATOMIC_ACQUIRE);
    for (uint64_t i = 0; i <= t->tmask; i++)
        if (t->entries[i].ctx_id)
            push_entry(t, &t->entries[i], hib);
    t->ndirty = 0;
    t->dirty_overflow = 0;
}

static void push_dirty(struct hp_thread *t)
{
    if (t->dirty_overflow) {
        t->dirty_overflow = 0;
        hp_push_all(t);
        return;
    }
    int hib = __atomic_load_n(&hp_cache_flushing, __ATOMIC_ACQUIRE);
    for (uint32_t i = 0; i < t->ndirty; i++) {
        struct tentry *e = &t->entries[t->dirty[i]];
        if (e->dirty)
            push_entry(t, e, hib);
    }
    t->ndirty = 0;
}

/* Push the global part: the process's live heap (peak) and the totals. */
void hp_publish_global(struct hp_thread *t)
{
    if (t->allocs || t->frees) {
        hp_add_u64(&hp_prof.total_allocs, t->allocs);
        hp_add_u64(&hp_prof.total_frees, t->frees);
        hp_add_u64(&hp_prof.total_bytes, t->bytes);
        t->allocs = t->frees = t->bytes = 0;
        if (t->truncs) {
            __atomic_fetch_add(&hp_counters.truncated_stacks, t->truncs, __ATOMIC_RELAXED);
            t->truncs = 0;
        }
    }
    int64_t ds = t->pend_size, dc = t->pend_count;
    t->pend_size = t->pend_count = 0;
    if (ds || dc)
        hp_global_live(ds, dc, hp_now_ms());
}

/* Push this thread's changes, unless a dump is being written: then they wait in the cache (which
 * may go past the slack meanwhile) for the thread's next event after it. */
void hp_publish(struct hp_thread *t)
{
    if (HP_UNLIKELY(!hp_move_try()))
        return;
    push_dirty(t);
    hp_publish_global(t);
    hp_move_end();
}

void hp_flush_entry(struct hp_thread *t, struct tentry *e)
{
    if (e->ctx_id)
        push_entry(t, e, 1);
}

void hp_flush_thread(struct hp_thread *t)
{
    /* Events its signal handlers left first: they are part of what the thread did. */
    if (t->ndef)
        hp_run_deferred(t);
    hp_push_all(t);
    hp_publish_global(t);
    for (uint64_t i = 0; i <= t->tmask; i++) {
        if (t->entries[i].ctx_id) { /* entries never used stay untouched pages */
            hp_flush_entry(t, &t->entries[i]);
            t->entries[i].ctx_id = 0;
        }
    }
}
