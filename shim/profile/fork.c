/* fork: the parent holds every lock of the profiler across it; the child keeps its own
 * thread's cache and folds the caches of the threads that did not survive. */
#include "profile/profile_internal.h"

/* The caches of threads that did not survive a fork (hp_profile_fork_child) are folded in
 * two parts. At the fork, their live and allocation counters go to the contexts, read from the
 * entries without writing them (so the entries' pages stay shared with the parent), which
 * keeps every context's counters, and so the child's peak figures, exact from its first
 * event. Their HIBs wait in the entries until the child's first dump (hp_fold_orphan): merging
 * them writes the shared table and the entries, pages a child that execs at once should not
 * have to copy (bench/fork_threads.c: 8 threads of 4,096 contexts each). */
static void orphan_counters(struct hp_thread *t)
{
    for (uint64_t i = 0; i <= t->tmask; i++) {
        const struct tentry *e = &t->entries[i];
        struct hp_ctx *c = e->ctx_id ? hp_entry_ctx(e) : NULL;
        int64_t lc, ls;
        if (c)
            hp_add_to_context(c, e, &lc, &ls);
    }
    hp_publish_global(t);
    t->alive = 0;
    t->orphan = 1;
}

/* The rest of an orphan's cache, at the child's first dump: its HIBs into the shared table.
 * Its counters are in the contexts already. With the thread's lock held. */
void hp_fold_orphan(struct hp_thread *t)
{
    for (uint64_t i = 0; i <= t->tmask; i++) {
        struct tentry *e = &t->entries[i];
        if (e->ctx_id) {
            if (e->hib.alloc_count)
                hp_table_merge(e->ctx_id, &e->hib, t->acc ? &t->acc[i] : NULL);
            e->ctx_id = 0;
        }
    }
    t->ndirty = 0;
    t->dirty_overflow = 0;
    t->orphan = 0;
}

/* Fork: the child must find every structure consistent, so the parent holds all locks across
 * fork(). Order: registry, each thread (list order), table sets in use, peak. (The dump lock is
 * taken before these, the spool lock and the metadata lock after them: core/init.c.) */
void hp_profile_fork_prepare(void)
{
    hp_lock(&hp_registry_lock);
    hp_take_all(hp_all_threads);
    hp_table_fork_prepare();
    hp_lock(&hp_peak_lock);
}

void hp_profile_fork_parent(void)
{
    hp_unlock(&hp_peak_lock);
    hp_table_fork_parent();
    for (struct hp_thread *t = hp_all_threads; t; t = t->next_all)
        hp_olock_release(&t->lock);
    hp_unlock(&hp_registry_lock);
}

void hp_profile_fork_child(void)
{
    /* No dump runs in the child, nor any other thread's move. */
    hp_cache_hold = hp_cache_moving = hp_cache_flushing = 0;
    hp_lock_reset(&hp_peak_lock);
    hp_table_fork_child();
    /* Only the forking thread survives: the others' counters go to the contexts now, their
     * HIBs at the child's first dump (orphan_counters). */
    struct hp_thread *self = hp_tls.thread;
    for (struct hp_thread *t = hp_all_threads; t; t = t->next_all) {
        hp_olock_reset(&t->lock);
        if (t->alive && t != self && t->ndef)
            hp_run_deferred(t); /* events its signal handlers left: rare (they write its entries) */
    }
    hp_lock_reset(&hp_registry_lock);
    /* This is the only thread now: plain additions to the contexts, not atomic ones (one per
     * counter of every entry of every thread that did not survive). */
    int was_multi = hp_prof_multi;
    hp_prof_multi = 0;
    for (struct hp_thread *t = hp_all_threads; t; t = t->next_all)
        if (t->alive && t != self)
            orphan_counters(t);
    hp_prof_multi = was_multi;
    /* After several threads every context holds its values for the current peak generation
     * (they are copied in full while several threads run): the surviving thread's cache goes
     * on from there, with its counters pushed, so that its entries' bases are the contexts'
     * values (other threads moved them since its last push) and base + delta is exact again.
     * After one, contexts may still wait for their lazy copy (hp_copy_at_peak), which the
     * child's cache entries must still trigger. */
    if (self && hp_prof_multi) {
        for (uint64_t i = 0; i <= self->tmask; i++) {
            struct tentry *e = &self->entries[i];
            if (e->ctx_id) {
                hp_push_entry_live(e);
                struct hp_ctx *c = hp_entry_ctx(e);
                e->base_count = __atomic_load_n(&c->live_count, __ATOMIC_RELAXED);
                e->base_size = __atomic_load_n(&c->live_size, __ATOMIC_RELAXED);
                e->peak_gen = hp_prof.peak_gen;
            }
        }
        self->ndirty = 0;
        self->dirty_overflow = 0;
        hp_publish_global(self);
    }
    hp_prof_multi = 0;
}
