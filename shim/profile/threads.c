/* The per-thread caches: made at a thread's first event (or taken from a thread that ended),
 * grown when the thread keeps missing, flushed when it exits; and the switch to several
 * threads (hp_note_threads). */
#include "profile/profile_internal.h"

#include <pthread.h>

int hp_prof_multi;
struct hp_thread *hp_all_threads, *hp_free_threads;
hp_lock_t hp_registry_lock = HP_LOCK_INIT;
static uint64_t tmask_max; /* thread_cache_size - 1 */
static pthread_key_t exit_key;
static int exit_key_ok;

/* Move to a table of context entries four times larger (at most thread_cache_size): every
 * entry is flushed, the new table starts empty. The old one stays in the metadata arena. */
static int grow_entries(struct hp_thread *t)
{
    uint64_t n = (t->tmask + 1) * 4;
    if (n > tmask_max + 1)
        n = tmask_max + 1;
    t->tdisplaced = 0;
    struct tentry *ne = hp_meta_alloc(n * sizeof *ne);
    if (!ne)
        return 0;
    /* The access figures beside them grow too (without memory for them: none from now on,
     * blocks with figures then go to the shared table one by one). */
    struct acc_run *na = t->acc ? hp_meta_alloc(n * sizeof *na) : NULL;
    for (uint64_t i = 0; i <= t->tmask; i++)
        hp_flush_entry(t, &t->entries[i]);
    t->ndirty = 0; /* indices into the old table; hp_flush_entry pushed them */
    t->dirty_overflow = 0;
    t->entries = ne;
    t->acc = na;
    t->tmask = n - 1;
    return 1;
}

struct tentry *hp_entry_new(struct hp_thread *t, struct tentry *e, struct hp_ctx *c, uint32_t id)
{
    if (!c)
        c = __atomic_load_n(&hp_prof.by_id[id], __ATOMIC_ACQUIRE);
    if (!c)
        return NULL;
    if (e->ctx_id) {
        /* A collision: its live changes must reach the context before the slot is reused,
         * unless the table grows instead (after displacing half its size). */
        hp_move_begin();
        if (++t->tdisplaced > (t->tmask + 1) / 2 && t->tmask < tmask_max && grow_entries(t))
            e = &t->entries[hp_entry_slot(id, t->tmask)];
        else
            hp_flush_entry(t, e);
        hp_move_end();
    }
    hp_memset(e, 0, sizeof *e);
    e->ctx_id = c->id;
    e->base_count = __atomic_load_n(&c->live_count, __ATOMIC_RELAXED);
    e->base_size = __atomic_load_n(&c->live_size, __ATOMIC_RELAXED);
    e->first_ms = UINT32_MAX;
    e->d_min_size = UINT64_MAX;
    hp_hib_run_reset(&e->hib);
    if (t->acc)
        t->acc[e - t->entries] = (struct acc_run){0};
    /* No entry held changes of c: its counters are its true values. */
    if (!hp_prof_multi && c->peak_gen != hp_prof.peak_gen)
        hp_copy_at_peak(c, e->base_count, e->base_size);
    e->peak_gen = hp_prof.peak_gen;
    return e;
}

/* A stack cache four times larger (at most HP_SCACHE_SETS sets), empty: it is only a cache. */
HP_COLD void hp_grow_scache(struct hp_thread *t)
{
    uint64_t n = (t->smask + 1) * 4;
    if (n > HP_SCACHE_SETS)
        n = HP_SCACHE_SETS;
    t->smisses = 0;
    struct scache_entry(*ns)[2] = hp_meta_alloc(n * sizeof *ns);
    if (ns) {
        t->scache = ns;
        t->smask = n - 1;
    }
}

static uint64_t nthreads; /* thread caches ever created = most threads alive at once */

uint64_t hp_profile_slack_bound(void) { return hp_prof_multi ? hp_prof.slack * 2 * nthreads : 0; }

void (*hp_profile_thread_exit_hook)(void);

static void thread_exit(void *arg)
{
    struct hp_thread *t = arg;
    void (*hook)(void) = __atomic_load_n(&hp_profile_thread_exit_hook, __ATOMIC_ACQUIRE);
    if (hook)
        hook();
    hp_tls.depth++;
    hp_move_begin();
    int fast = hp_olock_own(&t->lock);
    hp_flush_thread(t);
    t->alive = 0;
    hp_olock_disown(&t->lock, fast);
    hp_move_end();
    hp_tls.thread = NULL;
    hp_tls.dead = 1;
    hp_lock(&hp_registry_lock);
    t->next_free = hp_free_threads;
    hp_free_threads = t;
    hp_unlock(&hp_registry_lock);
    hp_leave();
}

/* The thread's first event: a cache from the free list or a new one. */
HP_COLD struct hp_thread *hp_thread_new(void)
{
    struct hp_thread *t;
    if (hp_tls.dead)
        return NULL;
    hp_lock(&hp_registry_lock);
    t = hp_free_threads;
    if (t) {
        hp_free_threads = t->next_free;
        hp_walk_cache_forget(&t->walk); /* another thread's stack */
    } else {
        t = hp_meta_alloc(sizeof *t);
        if (t) {
            t->tmask = (tmask_max < HP_TCACHE_MIN ? tmask_max + 1 : HP_TCACHE_MIN) - 1;
            t->entries = hp_meta_alloc((t->tmask + 1) * sizeof(struct tentry));
            t->smask = HP_SCACHE_SETS_MIN - 1;
            t->scache = hp_meta_alloc((t->smask + 1) * sizeof *t->scache);
        }
        if (t && t->entries && t->scache) {
            hp_walk_cache_reset(&t->walk);
            nthreads++;
            t->next_all = hp_all_threads;
            __atomic_store_n(&hp_all_threads, t, __ATOMIC_RELEASE);
        } else {
            t = NULL;
        }
    }
    int others = 0;
    for (struct hp_thread *o = hp_all_threads; o; o = o->next_all)
        others += o->alive && o != t;
    if (t) {
        hp_olock_prepare(&t->lock);
        t->alive = 1;
    }
    hp_unlock(&hp_registry_lock);
    if (!t) {
        hp_tls.dead = 1; /* out of metadata: account directly from now on */
        return NULL;
    }
    if (others)
        hp_note_threads();
    hp_tls.thread = t;
    /* The destructor flushes the cache when the thread exits. pthread_setspecific does not
     * allocate for the first keys, which is where ours is. */
    if (exit_key_ok)
        pthread_setspecific(exit_key, t);
    return t;
}

void hp_note_threads(void)
{
    if (__atomic_load_n(&hp_prof_multi, __ATOMIC_RELAXED))
        return;
    /* With one thread, contexts are only brought up to date when needed; from now on other
     * threads read them, so bring this thread's up to date first. */
    struct hp_thread *t = hp_tls.thread;
    /* Inside the shim while the locks are held: a signal handler's dump then waits for us
     * instead of waiting on our locks forever. */
    int outer = !hp_tls.depth;
    hp_tls.depth++;
    if (t && outer) {
        hp_move_begin();
        int fast = hp_olock_own(&t->lock);
        hp_push_all(t);
        hp_olock_disown(&t->lock, fast);
        hp_move_end();
    }
    /* Values at the peak are no longer copied lazily: make them final. */
    hp_lock(&hp_peak_lock);
    hp_copy_stale_contexts(0);
    hp_unlock(&hp_peak_lock);
    __atomic_store_n(&hp_prof_multi, 1, __ATOMIC_SEQ_CST);
    hp_leave();
}

void hp_profile_thread_tables(uint64_t *entries, uint64_t *sets)
{
    struct hp_thread *t = hp_tls.thread;
    *entries = t ? t->tmask + 1 : 0;
    *sets = t ? t->smask + 1 : 0;
}

/* Before a seccomp filter: owners take their locks with an exchange from now on (rt.h). The
 * registry keeps flushes and forks from taking locks meanwhile. */
void hp_profile_before_sandbox(void)
{
    hp_lock(&hp_registry_lock);
    if (hp_olock_asym) {
        for (struct hp_thread *t = hp_all_threads; t; t = t->next_all)
            hp_olock_set_symmetric(&t->lock);
        hp_olock_symmetric();
    }
    hp_unlock(&hp_registry_lock);
}

void hp_threads_init(void)
{
    tmask_max = hp_opt.thread_cache_size - 1;
    exit_key_ok = pthread_key_create(&exit_key, thread_exit) == 0;
}
