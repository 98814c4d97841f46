/* Allocation profiling: every allocation is attributed to its call stack (stack depot), every
 * free becomes a block event merged into a per-thread cache of partial HIBs, and those flow into
 * one set-associative shared HIB table whose evicted entries go to the profile at once.
 *
 * Hot paths take only their own thread's lock (contended only by a dump or fork). Live-heap
 * counters are pushed from the thread to the contexts and the global totals on every event
 * while the process has one thread, and in batches of peak_slack_kb once it has more; that
 * batching is the only source of error in the peak figures (documented in docs/FORMAT.md). */
#include "profile/profile.h"
#include "unwind/unwind.h"
#include "rt/rt.h"

#include <errno.h>
#include <pthread.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>

struct hp_prof hp_prof;

/* ---------- stack depot ---------- */

static struct hp_ctx **buckets;
static uint64_t bucket_mask;

static int same_stack(const struct hp_ctx *c, uint64_t h, const uintptr_t *pcs, int n)
{
    if (c->hash != h || c->depth != (uint32_t)n)
        return 0;
    for (int i = 0; i < n; i++)
        if (c->pcs[i] != pcs[i])
            return 0;
    return 1;
}

/* A context another thread put in the chain may not be in by_id yet (its thread stores it
 * there right after): store it here too (the same pointer), so every context depot_get hands
 * out can be found by its id (thread cache entries keep only the id). */
static struct hp_ctx *published(struct hp_ctx *c)
{
    if (HP_UNLIKELY(!__atomic_load_n(&hp_prof.by_id[c->id], __ATOMIC_ACQUIRE)))
        __atomic_store_n(&hp_prof.by_id[c->id], c, __ATOMIC_RELEASE);
    return c;
}

/* The context of a stack, made if new. nested: for a signal handler that interrupted this
 * thread inside the shim (hp_meta_alloc_nested). */
static HP_COLD struct hp_ctx *depot_get(const uintptr_t *pcs, int n, uint64_t h, int nested)
{
    struct hp_ctx **b = &buckets[h & bucket_mask];
    struct hp_ctx *head = __atomic_load_n(b, __ATOMIC_ACQUIRE);
    for (struct hp_ctx *c = head; c; c = c->next)
        if (same_stack(c, h, pcs, n))
            return published(c);
    uint32_t id = __atomic_fetch_add(&hp_prof.next_id, 1, __ATOMIC_RELAXED);
    if (id >= hp_prof.max_id) {
        __atomic_store_n(&hp_prof.next_id, hp_prof.max_id, __ATOMIC_RELAXED);
        return NULL;
    }
    size_t csize = sizeof(struct hp_ctx) + (size_t)n * sizeof(uintptr_t);
    struct hp_ctx *c = nested ? hp_meta_alloc_nested(csize) : hp_meta_alloc(csize);
    if (!c) {
        /* Hand the id back if nobody took one since (a hole otherwise; ids are only names). */
        uint32_t expect = id + 1;
        __atomic_compare_exchange_n(&hp_prof.next_id, &expect, id, 0, __ATOMIC_RELAXED,
                                    __ATOMIC_RELAXED);
        return NULL;
    }
    c->hash = h;
    c->id = id;
    c->depth = (uint32_t)n;
    c->first_alloc_ms = UINT32_MAX;
    c->min_size = UINT64_MAX;
    c->peak_gen = __atomic_load_n(&hp_prof.peak_gen, __ATOMIC_RELAXED); /* nothing live at the peak */
    hp_memcpy(c->pcs, pcs, (size_t)n * sizeof *pcs);
    for (;;) {
        c->next = head;
        if (__atomic_compare_exchange_n(b, &head, c, 0, __ATOMIC_RELEASE, __ATOMIC_ACQUIRE))
            break;
        /* Someone else inserted: maybe this very stack. Then hand the id back if nobody took
         * one since (otherwise it stays a hole; ids are only names) and drop our copy. */
        for (struct hp_ctx *o = head; o; o = o->next)
            if (same_stack(o, h, pcs, n)) {
                uint32_t expect = id + 1;
                __atomic_compare_exchange_n(&hp_prof.next_id, &expect, id, 0, __ATOMIC_RELAXED,
                                            __ATOMIC_RELAXED);
                return published(o);
            }
    }
    __atomic_fetch_add(&hp_prof.ncontexts, 1, __ATOMIC_RELAXED);
    __atomic_store_n(&hp_prof.by_id[id], c, __ATOMIC_RELEASE);
    return c;
}

int hp_profiling;
/* Where HIBs evicted from the shared table go (hp_profile_init). */
static void (*evict_sink)(const struct hpf_hib *);

/* ---------- shared HIB table ---------- */

struct slot {
    uint32_t ctx_id;
    uint32_t pad;
    uint64_t last_use;
    struct hpf_hib hib;
};

struct set {
    hp_lock_t lock;
    uint64_t clock;
};

static struct set *sets;
static struct slot *slots;
static uint64_t nsets, ways;

/* Context ids are handed out in sequence, so consecutive ids fill one set's ways before the
 * next set: a table with room for every context never evicts, and only as many of its pages
 * are touched as there are contexts. Past nsets * ways contexts, ids wrap onto used sets. */
static uint64_t set_of(uint32_t ctx_id) { return ((ctx_id - 1u) / ways) & (nsets - 1); }

/* Merge a thread's running HIB of context ctx_id into the table. */
static void table_merge(uint32_t ctx_id, const struct hp_hib_run *run)
{
    if (run->alloc_count == 0)
        return;
    struct hpf_hib hib;
    hp_hib_run_to(run, &hib);
    hib.context_id = ctx_id;
    uint64_t si = set_of(ctx_id);
    struct set *s = &sets[si];
    struct slot *row = &slots[si * ways];
    hp_lock(&s->lock);
    s->clock++;
    struct slot *victim = NULL;
    for (uint64_t w = 0; w < ways; w++) {
        struct slot *sl = &row[w];
        if (sl->ctx_id == ctx_id) {
            hp_hib_merge(&sl->hib, &hib);
            sl->last_use = s->clock;
            hp_unlock(&s->lock);
            return;
        }
        if (!victim || (sl->ctx_id == 0 && victim->ctx_id != 0) ||
            (victim->ctx_id != 0 && sl->ctx_id != 0 && sl->last_use < victim->last_use))
            victim = sl;
    }
    if (victim->ctx_id != 0) {
        /* The RFC's associative table: the least recently used entry of the set goes to the
         * profile now and the reader merges it with later records of the same context. */
        victim->hib.flags = HPF_HIB_EVICTED;
        if (evict_sink)
            evict_sink(&victim->hib);
        hp_count(&hp_counters.evicted_hibs);
    }
    victim->ctx_id = ctx_id;
    victim->last_use = s->clock;
    hp_memset(&victim->hib, 0, sizeof victim->hib);
    victim->hib.context_id = ctx_id;
    hp_hib_merge(&victim->hib, &hib);
    hp_unlock(&s->lock);
}

void hp_table_foreach(void (*fn)(const struct hpf_hib *, void *), void *arg)
{
    /* Sets past the last context id's were never used (set_of): their pages stay untouched. */
    uint64_t ids = __atomic_load_n(&hp_prof.next_id, __ATOMIC_ACQUIRE);
    uint64_t used = ids / ways + 1;
    for (uint64_t si = 0; si < nsets && si < used; si++) {
        hp_lock(&sets[si].lock);
        for (uint64_t w = 0; w < ways; w++) {
            struct slot *sl = &slots[si * ways + w];
            if (sl->ctx_id) {
                struct hpf_hib copy;
                hp_memcpy(&copy, &sl->hib, sizeof copy);
                copy.flags = 0;
                hp_unlock(&sets[si].lock);
                fn(&copy, arg);
                hp_lock(&sets[si].lock);
            }
        }
        hp_unlock(&sets[si].lock);
    }
}

/* ---------- counters shared by threads ---------- */

static int multi; /* set before a second thread can exist */


static inline void add_i64(int64_t *p, int64_t d)
{
    if (multi)
        __atomic_fetch_add(p, d, __ATOMIC_RELAXED);
    else
        __atomic_store_n(p, __atomic_load_n(p, __ATOMIC_RELAXED) + d, __ATOMIC_RELAXED);
}

static inline void add_u64(uint64_t *p, uint64_t d) { add_i64((int64_t *)p, (int64_t)d); }

static inline void max_u64(uint64_t *p, uint64_t v)
{
    uint64_t cur = __atomic_load_n(p, __ATOMIC_RELAXED);
    if (!multi) {
        if (v > cur)
            __atomic_store_n(p, v, __ATOMIC_RELAXED);
        return;
    }
    while (v > cur && !__atomic_compare_exchange_n(p, &cur, v, 1, __ATOMIC_RELAXED, __ATOMIC_RELAXED))
        ;
}

static inline void min_u64(uint64_t *p, uint64_t v)
{
    uint64_t cur = __atomic_load_n(p, __ATOMIC_RELAXED);
    if (!multi) {
        if (v < cur)
            __atomic_store_n(p, v, __ATOMIC_RELAXED);
        return;
    }
    while (v < cur && !__atomic_compare_exchange_n(p, &cur, v, 1, __ATOMIC_RELAXED, __ATOMIC_RELAXED))
        ;
}

static inline void min_u32(uint32_t *p, uint32_t v)
{
    uint32_t cur = __atomic_load_n(p, __ATOMIC_RELAXED);
    if (!multi) {
        if (v < cur)
            __atomic_store_n(p, v, __ATOMIC_RELAXED);
        return;
    }
    while (v < cur && !__atomic_compare_exchange_n(p, &cur, v, 1, __ATOMIC_RELAXED, __ATOMIC_RELAXED))
        ;
}

static inline void max_u32(uint32_t *p, uint32_t v)
{
    uint32_t cur = __atomic_load_n(p, __ATOMIC_RELAXED);
    if (!multi) {
        if (v > cur)
            __atomic_store_n(p, v, __ATOMIC_RELAXED);
        return;
    }
    while (v > cur && !__atomic_compare_exchange_n(p, &cur, v, 1, __ATOMIC_RELAXED, __ATOMIC_RELAXED))
        ;
}

static hp_lock_t peak_lock = HP_LOCK_INIT;

/* Per-context values at the global peak. When the heap first shrinks after a new peak, every
 * context's live counters are its values at the peak. With several threads they are copied from
 * every context there and then (one pass, so only when the peak grew by more than 1% since the
 * last one; the counters are at most the slack behind). With one thread the copy is lazy: the
 * peak generation is bumped, and a context's values are copied the first time it changes after
 * that (or when the dump finds it unchanged), so a request costs nothing and the values are
 * exact. peak_lock orders requests, passes and dumps. */
static void copy_at_peak(struct hp_ctx *c, int64_t lc, int64_t ls)
{
    c->peak_live_count = lc > 0 ? (uint64_t)lc : 0;
    c->peak_live_size = ls > 0 ? (uint64_t)ls : 0;
    c->peak_gen = hp_prof.peak_gen;
}

/* Every context not copied since the current generation began: its counters have not changed
 * since, so they are its values at the peak. With several threads: all of them. */
static void copy_stale_contexts(int all)
{
    uint32_t n = __atomic_load_n(&hp_prof.next_id, __ATOMIC_ACQUIRE);
    for (uint32_t id = 1; id < n && id < hp_prof.max_id; id++) {
        struct hp_ctx *c = __atomic_load_n(&hp_prof.by_id[id], __ATOMIC_ACQUIRE);
        if (c && (all || c->peak_gen != hp_prof.peak_gen))
            copy_at_peak(c, __atomic_load_n(&c->live_count, __ATOMIC_RELAXED),
                         __atomic_load_n(&c->live_size, __ATOMIC_RELAXED));
    }
}

/* Take the values at the peak now (see above); with peak_lock held. */
static void peak_request(void)
{
    hp_prof.peak_gen++;
    if (multi)
        copy_stale_contexts(1);
    hp_prof.peak_snap_size = hp_prof.peak_size;
    __atomic_store_n(&hp_prof.peak_pending, 0, __ATOMIC_RELEASE);
}

static HP_COLD void peak_request_if_pending(void)
{
    hp_lock(&peak_lock);
    if (hp_prof.peak_pending)
        peak_request();
    hp_unlock(&peak_lock);
}

void hp_peak_finish(void)
{
    hp_lock(&peak_lock);
    if (hp_prof.peak_pending && (uint64_t)__atomic_load_n(&hp_prof.live_size, __ATOMIC_RELAXED) >= hp_prof.peak_size)
        peak_request();
    if (!multi)
        copy_stale_contexts(0);
    hp_unlock(&peak_lock);
}

/* The process's live heap reached a new high: now_size. */
static __attribute__((noinline)) void new_peak(int64_t now_size, int64_t now_count, uint32_t now_ms)
{
    if (multi)
        hp_lock(&peak_lock);
    if ((uint64_t)now_size > hp_prof.peak_size) {
        hp_prof.peak_size = (uint64_t)now_size;
        /* Threads batch their live-byte changes by the slack: peak_slack_kb, or 1/256 of the
         * peak once that is more (rounded to a power of two, so it changes rarely). The error
         * bound stays proportionate for small heaps, and large ones push less often. */
        uint64_t want = hp_prof.peak_size >> 8;
        if (want > __atomic_load_n(&hp_prof.slack, __ATOMIC_RELAXED))
            __atomic_store_n(&hp_prof.slack, hp_round_pow2(want), __ATOMIC_RELAXED);
        hp_prof.peak_count = now_count > 0 ? (uint64_t)now_count : 0;
        hp_prof.peak_ms = now_ms;
        /* Per-context values at the peak are wanted when the heap starts to shrink from it.
         * With one thread that costs nothing at the time (copied lazily), so every new peak
         * counts; with several it is a pass over the contexts, taken only when the peak grew
         * by more than 1% since the last one, which bounds the number of passes. */
        if (!multi || hp_prof.peak_size > hp_prof.peak_snap_size + hp_prof.peak_snap_size / 100 ||
            hp_prof.peak_snap_size == 0)
            hp_prof.peak_pending = 1;
        /* dump_peak_growth: written by this thread on its way out of the shim. */
        if (HP_UNLIKELY(hp_prof.peak_dump_at) && hp_prof.peak_size >= hp_prof.peak_dump_at) {
            hp_prof.peak_dump_at = hp_prof.peak_size + hp_prof.peak_size / 100 * hp_opt.dump_peak_growth;
            if (!hp_dump_pending)
                hp_dump_pending = HPF_DUMP_PEAK;
        }
    }
    if (multi)
        hp_unlock(&peak_lock);
}

/* Apply a change of the process's live heap at time now_ms. Called with fresh per-context
 * counters. */
static inline void global_live(int64_t dsize, int64_t dcount, uint32_t now_ms)
{
    int64_t now_size, now_count;
    if (multi) {
        now_size = __atomic_add_fetch(&hp_prof.live_size, dsize, __ATOMIC_RELAXED);
        now_count = __atomic_add_fetch(&hp_prof.live_count, dcount, __ATOMIC_RELAXED);
    } else {
        now_size = hp_prof.live_size += dsize;
        now_count = hp_prof.live_count += dcount;
    }
    if (HP_UNLIKELY(now_size > 0 &&
                    (uint64_t)now_size > __atomic_load_n(&hp_prof.peak_size, __ATOMIC_RELAXED)))
        new_peak(now_size, now_count, now_ms);
}

/* ---------- per-thread caches ---------- */

/* Set while a dump is written (hp_profile_hold): threads keep their changes in their caches,
 * so what the dump reads from the contexts and the shared table is one moment. A thread that
 * moves changes out of its cache (a push, an entry displaced, the thread leaving, an event
 * without a cache) counts itself in `moving` first and looks at `hold` after; the dump sets
 * `hold` first and waits for `moving` to drop to 0 after (both sequentially consistent), so
 * either the thread sees the hold or the dump sees the thread and waits for its move to end.
 * Otherwise the dump could read a context's counters before a move and its HIB after it. */
static int hold, moving;

/* Set by a dump from the moment its flush holds every thread's lock to its hold
 * (hp_profile_flush_all, hp_profile_hold). Moves wait for it as for the hold, but for the
 * flushing thread's own (the events of other threads' signal handlers it applies): a thread
 * flushed already that pushed before the hold could bring in the free of a block whose
 * allocation another thread made after its own flush, and the dump would count the one without
 * the other. Such a thread may wait with its own lock held (an entry displaced in an event):
 * the flush took that lock before setting this, and no longer needs it. */
static int flushing;
static struct hp_tls *flusher;

static int moves_held(void)
{
    return __atomic_load_n(&hold, __ATOMIC_SEQ_CST) ||
           (__atomic_load_n(&flushing, __ATOMIC_SEQ_CST) && flusher != &hp_tls);
}

static void wait_hold(void)
{
    while (moves_held())
        hp_sleep_ns(50000);
}

/* Start a move unless a dump is being written (0: it is). */
static int move_try(void)
{
    __atomic_add_fetch(&moving, 1, __ATOMIC_SEQ_CST);
    if (!moves_held())
        return 1;
    __atomic_sub_fetch(&moving, 1, __ATOMIC_RELEASE);
    return 0;
}

/* Start a move, waiting for the dump being written, if any. */
static void move_begin(void)
{
    while (!move_try())
        wait_hold();
}

static void move_end(void) { __atomic_sub_fetch(&moving, 1, __ATOMIC_RELEASE); }

/* A thread's entry for one context: three cache lines, of which an allocation touches the
 * first and the third and a free the first two (when an entry spread over five, python3's
 * allocation path spent a fifth of its samples waiting for its first line, and the free path a
 * quarter for its lines). */
struct tentry {
    /* line 0: allocations and frees */
    uint32_t ctx_id;
    uint32_t peak_gen; /* with one thread: the context's values at the peak are copied */
    int64_t d_live_count, d_live_size, d_live_ts;
    uint32_t first_ms, last_ms;
    uint32_t dirty;
    uint32_t pad;
    /* lines 0 (its four counters) and 1: the blocks freed (hib.h) */
    struct hp_hib_run hib;
    /* line 2: allocations */
    uint64_t d_allocs, d_bytes, d_min_size, d_max_size;
    /* The context's live counters when last pushed, and the largest base + delta seen since:
     * with one thread that is the context's exact maximum, without touching the context. */
    int64_t base_count, base_size;
    int64_t seen_max_count, seen_max_size;
} __attribute__((aligned(HP_CACHELINE)));

_Static_assert(sizeof(struct tentry) == 3 * HP_CACHELINE, "a thread entry is three lines");
_Static_assert(__builtin_offsetof(struct tentry, hib) + 16 == HP_CACHELINE &&
                   __builtin_offsetof(struct tentry, d_allocs) == 2 * HP_CACHELINE,
               "the free path's fields are lines 0 and 1, the allocation path's 0 and 2");

/* The context of entry e (entries hold only its id: the pointer is needed only when pushing). */
static inline struct hp_ctx *entry_ctx(const struct tentry *e)
{
    return __atomic_load_n(&hp_prof.by_id[e->ctx_id], __ATOMIC_ACQUIRE);
}

#define DEFER_MAX 128
#define DIRTY_MAX 256

/* An event of a signal handler that interrupted this thread while it recorded one of its own:
 * applied, in the order they came, when the interrupted call is done with the thread's cache. */
enum { DEF_FREE, DEF_ALLOC };

struct deferred {
    uint32_t kind, ctx, alloc_ms, alloc_cpu, dealloc_ms, dealloc_cpu;
    uint64_t size;
};

/* Recently seen stacks of this thread, by 64-bit stack hash: two-way sets, the most recently
 * used way first. A hit is trusted without comparing frames (two live stacks colliding in 64
 * bits is far less likely than a bit flip), which keeps the context's own memory off the
 * allocation path; the depot itself compares frames. In front of it a small direct-mapped
 * table of the stacks allocated from a moment ago: a loop allocates from a handful of stacks
 * over and over (92% of python3's allocations hit 64 entries, 99% of sqlite3's), and 1 KiB
 * stays in the level-1 cache where the 128 KiB of the sets do not. */
#define SCACHE_SETS 4096
#define RECENT_LOG 6

/* A thread's stack cache and context entries start small and grow fourfold, up to their full
 * size, once the thread keeps missing or displacing: most threads of a many-threaded server
 * allocate from a handful of stacks, and full-size tables (1.2 MiB of metadata a thread) would
 * run a thousand threads into the metadata budget. */
#define SCACHE_SETS_MIN 256
#define TCACHE_MIN 256

struct scache_entry {
    uint64_t hash;
    uint32_t id; /* 0: empty */
    uint32_t pad;
};

struct hp_thread {
    /* What every event reads or writes, in one line. */
    hp_olock_t lock; /* the owner's events; a dump's flush and a fork from others (lock.h) */
    volatile uint32_t ndef;
    struct tentry *entries;
    uint64_t tmask;    /* entries - 1 */
    int64_t pend_size, pend_count;
    uint64_t allocs, frees, bytes; /* not yet added to hp_prof's totals */
    /* The stack cache (allocations that miss the recent table). */
    struct scache_entry (*scache)[2];
    uint64_t smask;   /* stack-cache sets - 1 */
    uint64_t smisses; /* stack-cache misses since it last grew */
    uint64_t tdisplaced; /* entries displaced since the table last grew */
    uint32_t ndirty;
    int dirty_overflow; /* more dirty entries than the list holds: push them all */
    int alive;
    int orphan; /* in a forked child, a thread that did not survive the fork: see fold_orphan */
    uint64_t truncs; /* allocations with a truncated stack, not yet added to hp_counters */
    struct hp_thread *next_all, *next_free;
    struct scache_entry recent[1 << RECENT_LOG]; /* by the hash's top bits */
    uintptr_t pcs[256 + HP_STACK_SLACK]; /* capture buffer (see hp_stack_capture) */
    uintptr_t npcs[256 + HP_STACK_SLACK]; /* the same for a signal handler's allocation */
    int nested; /* a signal handler's allocation is being recorded (npcs in use) */
    struct hp_walk_cache walk;           /* the previous stack walk (cfi.h) */
    uint32_t dirty[DIRTY_MAX];
    struct deferred def[DEFER_MAX];
} __attribute__((aligned(HP_CACHELINE)));

_Static_assert(__builtin_offsetof(struct hp_thread, scache) == HP_CACHELINE,
               "the fields of every event fill the first line");

static struct hp_thread *all_threads, *free_threads;
static hp_lock_t registry_lock = HP_LOCK_INIT;
static uint64_t tmask_max; /* thread_cache_size - 1 */
static pthread_key_t exit_key;
static int exit_key_ok;

/* One thread: the first change to a context since the peak generation began. Its value until
 * now, the pushed counters plus this thread's deltas, is its value at the peak. */
static inline void snap_entry(struct tentry *e)
{
    if (HP_UNLIKELY(!multi && e->peak_gen != hp_prof.peak_gen)) {
        struct hp_ctx *c = entry_ctx(e);
        if (c->peak_gen != hp_prof.peak_gen)
            copy_at_peak(c, e->base_count + e->d_live_count, e->base_size + e->d_live_size);
        e->peak_gen = hp_prof.peak_gen;
    }
}

/* Add entry e's pending live and allocation counters to its context c, and the largest live
 * values e has seen (its own and the context's after the addition) to the context's maxima;
 * e itself is left as it is. *lc, *ls: the context's live counters after the addition (only
 * when e had live changes: returns 1). */
static int add_to_context(struct hp_ctx *c, const struct tentry *e, int64_t *lc, int64_t *ls)
{
    int64_t max_count = e->seen_max_count, max_size = e->seen_max_size;
    int live = e->d_live_count || e->d_live_size || e->d_live_ts;
    if (live) {
        add_i64(&c->live_count, e->d_live_count);
        if (multi)
            *ls = __atomic_add_fetch(&c->live_size, e->d_live_size, __ATOMIC_RELAXED);
        else
            *ls = c->live_size += e->d_live_size;
        add_i64(&c->live_ts, e->d_live_ts);
        *lc = __atomic_load_n(&c->live_count, __ATOMIC_RELAXED);
        if (*lc > max_count)
            max_count = *lc;
        if (*ls > max_size)
            max_size = *ls;
    }
    if (max_count > 0)
        max_u64(&c->max_live_count, (uint64_t)max_count);
    if (max_size > 0)
        max_u64(&c->max_live_size, (uint64_t)max_size);
    if (e->d_allocs) {
        add_u64(&c->allocs, e->d_allocs);
        add_u64(&c->bytes, e->d_bytes);
        min_u32(&c->first_alloc_ms, e->first_ms);
        max_u32(&c->last_alloc_ms, e->last_ms);
        min_u64(&c->min_size, e->d_min_size);
        max_u64(&c->max_size, e->d_max_size);
    }
    return live;
}

static void push_entry_live(struct tentry *e)
{
    struct hp_ctx *c = entry_ctx(e);
    snap_entry(e);
    int64_t lc, ls;
    if (add_to_context(c, e, &lc, &ls)) {
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
 * HIB (busy-dumps: half the interval dumps of four threads had contexts whose alloc_count fell
 * thousands short of allocs). Since other threads' pushes wait out the flush too
 * (moves_held), only a push that began before the flush and the flush's own see the flag. */
static void push_entry(struct tentry *e, int hib)
{
    push_entry_live(e);
    if (hib && e->hib.alloc_count) {
        table_merge(e->ctx_id, &e->hib);
        hp_hib_run_reset(&e->hib);
    }
}

/* Push the thread's pending live-heap changes to the contexts and the global totals. */
static void push_all(struct hp_thread *t)
{
    int hib = __atomic_load_n(&flushing, __ATOMIC_ACQUIRE);
    for (uint64_t i = 0; i <= t->tmask; i++)
        if (t->entries[i].ctx_id)
            push_entry(&t->entries[i], hib);
    t->ndirty = 0;
    t->dirty_overflow = 0;
}

static void push_dirty(struct hp_thread *t)
{
    if (t->dirty_overflow) {
        t->dirty_overflow = 0;
        push_all(t);
        return;
    }
    int hib = __atomic_load_n(&flushing, __ATOMIC_ACQUIRE);
    for (uint32_t i = 0; i < t->ndirty; i++) {
        struct tentry *e = &t->entries[t->dirty[i]];
        if (e->dirty)
            push_entry(e, hib);
    }
    t->ndirty = 0;
}

/* Push the global part: the process's live heap (peak) and the totals. */
static void publish_global(struct hp_thread *t)
{
    if (t->allocs || t->frees) {
        add_u64(&hp_prof.total_allocs, t->allocs);
        add_u64(&hp_prof.total_frees, t->frees);
        add_u64(&hp_prof.total_bytes, t->bytes);
        t->allocs = t->frees = t->bytes = 0;
        if (t->truncs) {
            __atomic_fetch_add(&hp_counters.truncated_stacks, t->truncs, __ATOMIC_RELAXED);
            t->truncs = 0;
        }
    }
    int64_t ds = t->pend_size, dc = t->pend_count;
    t->pend_size = t->pend_count = 0;
    if (ds || dc)
        global_live(ds, dc, hp_now_ms());
}

void hp_profile_hold(int on)
{
    __atomic_store_n(&hold, on, __ATOMIC_SEQ_CST);
    /* Moves that began before the hold end before the dump reads anything. */
    while (on && __atomic_load_n(&moving, __ATOMIC_SEQ_CST))
        hp_cpu_relax();
    /* No push comes now until the hold ends. */
    __atomic_store_n(&flushing, 0, __ATOMIC_RELEASE);
}

/* Push this thread's changes, unless a dump is being written: then they wait in the cache (which
 * may go past the slack meanwhile) for the thread's next event after it. */
static void publish(struct hp_thread *t)
{
    if (HP_UNLIKELY(!move_try()))
        return;
    push_dirty(t);
    publish_global(t);
    move_end();
}

/* Called before a free is applied: if the heap is leaving a new peak, copy every context's
 * live counters now, while they still describe the peak (after a dump being written, as the
 * counters wait for it). */
static void peak_check_before_free(struct hp_thread *t)
{
    if (HP_UNLIKELY(__atomic_load_n(&hp_prof.peak_pending, __ATOMIC_RELAXED)) &&
        !__atomic_load_n(&hold, __ATOMIC_ACQUIRE)) {
        if (multi)
            publish(t);
        peak_request_if_pending();
    }
}

static void flush_entry(struct tentry *e)
{
    if (e->ctx_id)
        push_entry(e, 1);
}

static void run_deferred(struct hp_thread *t);

static void flush_thread(struct hp_thread *t)
{
    /* Events its signal handlers left first: they are part of what the thread did. */
    if (t->ndef)
        run_deferred(t);
    push_all(t);
    publish_global(t);
    for (uint64_t i = 0; i <= t->tmask; i++) {
        if (t->entries[i].ctx_id) { /* entries never used stay untouched pages */
            flush_entry(&t->entries[i]);
            t->entries[i].ctx_id = 0;
        }
    }
}

static HP_COLD struct tentry *entry_new(struct hp_thread *t, struct tentry *e, struct hp_ctx *c,
                                         uint32_t id);

static inline uint64_t entry_slot(uint32_t id, uint64_t mask) { return (id * 0x9e3779b1u) & mask; }

/* The thread's cache entry for context id (c: the context if the caller has it). */
static inline struct tentry *entry_for(struct hp_thread *t, struct hp_ctx *c, uint32_t id)
{
    struct tentry *e = &t->entries[entry_slot(id, t->tmask)];
    if (HP_LIKELY(e->ctx_id == id))
        return e;
    return entry_new(t, e, c, id);
}

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
    for (uint64_t i = 0; i <= t->tmask; i++)
        flush_entry(&t->entries[i]);
    t->ndirty = 0; /* indices into the old table; flush_entry pushed them */
    t->dirty_overflow = 0;
    t->entries = ne;
    t->tmask = n - 1;
    return 1;
}

static struct tentry *entry_new(struct hp_thread *t, struct tentry *e, struct hp_ctx *c, uint32_t id)
{
    if (!c)
        c = __atomic_load_n(&hp_prof.by_id[id], __ATOMIC_ACQUIRE);
    if (!c)
        return NULL;
    if (e->ctx_id) {
        /* A collision: its live changes must reach the context before the slot is reused,
         * unless the table grows instead (after displacing half its size). */
        move_begin();
        if (++t->tdisplaced > (t->tmask + 1) / 2 && t->tmask < tmask_max && grow_entries(t))
            e = &t->entries[entry_slot(id, t->tmask)];
        else
            flush_entry(e);
        move_end();
    }
    hp_memset(e, 0, sizeof *e);
    e->ctx_id = c->id;
    e->base_count = __atomic_load_n(&c->live_count, __ATOMIC_RELAXED);
    e->base_size = __atomic_load_n(&c->live_size, __ATOMIC_RELAXED);
    e->first_ms = UINT32_MAX;
    e->d_min_size = UINT64_MAX;
    hp_hib_run_reset(&e->hib);
    /* No entry held changes of c: its counters are its true values. */
    if (!multi && c->peak_gen != hp_prof.peak_gen)
        copy_at_peak(c, e->base_count, e->base_size);
    e->peak_gen = hp_prof.peak_gen;
    return e;
}

/* Only needed with several threads: with one, contexts are brought up to date as a whole
 * (push_all) when the peak is copied, at dumps and when a cache slot is reused. */
static void mark_dirty(struct hp_thread *t, struct tentry *e)
{
    if (multi && !e->dirty) {
        e->dirty = 1;
        if (t->ndirty < DIRTY_MAX)
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
    if (!multi) {
        if (grew) { /* a free cannot raise a maximum */
            int64_t lc = e->base_count + e->d_live_count, ls = e->base_size + e->d_live_size;
            if (lc > e->seen_max_count)
                e->seen_max_count = lc;
            if (ls > e->seen_max_size)
                e->seen_max_size = ls;
        }
        int64_t ds = t->pend_size, dc = t->pend_count;
        t->pend_size = t->pend_count = 0;
        global_live(ds, dc, now_ms);
    } else if (abs64(t->pend_size) >= hp_prof.slack || abs64(e->d_live_size) >= hp_prof.slack) {
        /* Only the slack triggers a push: how many contexts changed does not matter for the
         * accuracy, and pushing touches context lines other threads use. */
        publish(t);
    }
}

static uint64_t nthreads; /* thread caches ever created = most threads alive at once */

uint64_t hp_profile_slack_bound(void) { return multi ? hp_prof.slack * 2 * nthreads : 0; }

static void thread_exit(void *arg)
{
    struct hp_thread *t = arg;
    hp_tls.depth++;
    move_begin();
    int fast = hp_olock_own(&t->lock);
    flush_thread(t);
    t->alive = 0;
    hp_olock_disown(&t->lock, fast);
    move_end();
    hp_tls.thread = NULL;
    hp_tls.dead = 1;
    hp_lock(&registry_lock);
    t->next_free = free_threads;
    free_threads = t;
    hp_unlock(&registry_lock);
    hp_leave();
}

static struct hp_thread *thread_new(void);

static inline struct hp_thread *thread_get(void)
{
    struct hp_thread *t = hp_tls.thread;
    if (HP_LIKELY(t != NULL))
        return t;
    return thread_new();
}

/* The thread's first event: a cache from the free list or a new one. */
static HP_COLD struct hp_thread *thread_new(void)
{
    struct hp_thread *t;
    if (hp_tls.dead)
        return NULL;
    hp_lock(&registry_lock);
    t = free_threads;
    if (t) {
        free_threads = t->next_free;
        hp_walk_cache_forget(&t->walk); /* another thread's stack */
    } else {
        t = hp_meta_alloc(sizeof *t);
        if (t) {
            t->tmask = (tmask_max < TCACHE_MIN ? tmask_max + 1 : TCACHE_MIN) - 1;
            t->entries = hp_meta_alloc((t->tmask + 1) * sizeof(struct tentry));
            t->smask = SCACHE_SETS_MIN - 1;
            t->scache = hp_meta_alloc((t->smask + 1) * sizeof *t->scache);
        }
        if (t && t->entries && t->scache) {
            hp_walk_cache_reset(&t->walk);
            nthreads++;
            t->next_all = all_threads;
            __atomic_store_n(&all_threads, t, __ATOMIC_RELEASE);
        } else {
            t = NULL;
        }
    }
    int others = 0;
    for (struct hp_thread *o = all_threads; o; o = o->next_all)
        others += o->alive && o != t;
    if (t) {
        hp_olock_prepare(&t->lock);
        t->alive = 1;
    }
    hp_unlock(&registry_lock);
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
    if (__atomic_load_n(&multi, __ATOMIC_RELAXED))
        return;
    /* With one thread, contexts are only brought up to date when needed; from now on other
     * threads read them, so bring this thread's up to date first. */
    struct hp_thread *t = hp_tls.thread;
    /* Inside the shim while the locks are held: a signal handler's dump then waits for us
     * instead of waiting on our locks forever. */
    int outer = !hp_tls.depth;
    hp_tls.depth++;
    if (t && outer) {
        move_begin();
        int fast = hp_olock_own(&t->lock);
        push_all(t);
        hp_olock_disown(&t->lock, fast);
        move_end();
    }
    /* Values at the peak are no longer copied lazily: make them final. */
    hp_lock(&peak_lock);
    copy_stale_contexts(0);
    hp_unlock(&peak_lock);
    __atomic_store_n(&multi, 1, __ATOMIC_SEQ_CST);
    hp_leave();
}

/* ---------- events ---------- */

/* A free without a thread cache (the thread is exiting, or the metadata ran out): straight
 * into the shared table and the context. Out of line: it keeps the common path's frame small. */
static HP_COLD void free_event_direct(uint32_t ctx_id, uint64_t size, uint32_t alloc_ms,
                                      uint32_t alloc_cpu, uint32_t dealloc_ms, uint32_t dealloc_cpu)
{
    struct hp_ctx *c = __atomic_load_n(&hp_prof.by_id[ctx_id], __ATOMIC_ACQUIRE);
    if (!c)
        return;
    move_begin();
    struct hp_hib_run r;
    hp_hib_run_reset(&r);
    hp_hib_run_add(&r, size, alloc_ms, dealloc_ms, alloc_cpu, dealloc_cpu);
    table_merge(ctx_id, &r);
    hp_note_threads();
    if (__atomic_load_n(&hp_prof.peak_pending, __ATOMIC_RELAXED))
        peak_request_if_pending();
    __atomic_fetch_add(&c->live_count, -1, __ATOMIC_RELAXED);
    __atomic_fetch_add(&c->live_size, -(int64_t)size, __ATOMIC_RELAXED);
    __atomic_fetch_add(&c->live_ts, -(int64_t)alloc_ms, __ATOMIC_RELAXED);
    global_live(-(int64_t)size, -1, dealloc_ms);
    add_u64(&hp_prof.total_frees, 1);
    move_end();
}

static inline __attribute__((always_inline)) void free_event(struct hp_thread *t, uint32_t ctx_id,
                                                             uint64_t size, uint32_t alloc_ms,
                                                             uint32_t alloc_cpu, uint32_t dealloc_ms,
                                                             uint32_t dealloc_cpu)
{
    if (HP_UNLIKELY(!t)) {
        free_event_direct(ctx_id, size, alloc_ms, alloc_cpu, dealloc_ms, dealloc_cpu);
        return;
    }
    peak_check_before_free(t);
    struct tentry *e = entry_for(t, NULL, ctx_id);
    if (!e)
        return;
    snap_entry(e);
    hp_hib_run_add(&e->hib, size, alloc_ms, dealloc_ms, alloc_cpu, dealloc_cpu);
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
    struct tentry *e = entry_for(t, c, id);
    if (HP_UNLIKELY(!e))
        return 0;
    snap_entry(e);
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
static HP_COLD void run_deferred(struct hp_thread *t)
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
                free_event(t, d.ctx, d.size, d.alloc_ms, d.alloc_cpu, d.dealloc_ms, d.dealloc_cpu);
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
        if (n >= DEFER_MAX)
            return 0;
        t->def[n] = *d;
        __atomic_signal_fence(__ATOMIC_SEQ_CST);
        if (__atomic_compare_exchange_n(&t->ndef, &n, n + 1, 0, __ATOMIC_ACQ_REL, __ATOMIC_RELAXED))
            return 1;
    }
}

/* A stack cache four times larger (at most SCACHE_SETS sets), empty: it is only a cache. */
static HP_COLD void grow_scache(struct hp_thread *t)
{
    uint64_t n = (t->smask + 1) * 4;
    if (n > SCACHE_SETS)
        n = SCACHE_SETS;
    t->smisses = 0;
    struct scache_entry(*ns)[2] = hp_meta_alloc(n * sizeof *ns);
    if (ns) {
        t->scache = ns;
        t->smask = n - 1;
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
        struct hp_ctx *c = depot_get(frames, n, h, 1);
        struct deferred d = {DEF_ALLOC, c ? c->id : 0, now_ms, cpu, 0, 0, size};
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
    struct scache_entry *re = t ? &t->recent[h >> (64 - RECENT_LOG)] : NULL;
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
            *c = depot_get(frames, n, h, 0);
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
                if (HP_UNLIKELY(++t->smisses > t->smask + 1) && t->smask < SCACHE_SETS - 1)
                    grow_scache(t);
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
    struct hp_thread *t = thread_get();
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
            run_deferred(t);
        hp_olock_disown(&t->lock, fast);
    } else {
        hp_note_threads();
        move_begin();
        __atomic_fetch_add(&c->allocs, 1, __ATOMIC_RELAXED);
        __atomic_fetch_add(&c->bytes, size, __ATOMIC_RELAXED);
        __atomic_fetch_add(&c->live_count, 1, __ATOMIC_RELAXED);
        int64_t ls = __atomic_add_fetch(&c->live_size, (int64_t)size, __ATOMIC_RELAXED);
        __atomic_fetch_add(&c->live_ts, (int64_t)now_ms, __ATOMIC_RELAXED);
        max_u64(&c->max_live_size, (uint64_t)ls);
        min_u32(&c->first_alloc_ms, now_ms);
        max_u32(&c->last_alloc_ms, now_ms);
        min_u64(&c->min_size, size);
        max_u64(&c->max_size, size);
        global_live((int64_t)size, 1, now_ms);
        add_u64(&hp_prof.total_allocs, 1);
        add_u64(&hp_prof.total_bytes, size);
        move_end();
    }
    (void)cpu;
    tl->depth = 0;
    if (HP_UNLIKELY(hp_dump_pending))
        hp_run_pending();
    return id;
}

HP_HOT void hp_profile_free(uint32_t ctx, uint64_t size, uint32_t alloc_ms, uint32_t alloc_cpu)
{
    struct hp_tls *tl = &hp_tls;
    if (ctx >= hp_prof.max_id)
        return;
    struct hp_thread *pt = tl->thread;
    if (HP_LIKELY(pt != NULL)) {
        /* The entry's two lines are seldom in the first-level cache: ask for them now, and
         * the clock and cpu reads below overlap the wait. (Only this thread changes where its
         * entries are; a stale address would cost nothing but the prefetch.) */
        const char *pe = (const char *)&pt->entries[entry_slot(ctx, pt->tmask)];
        __builtin_prefetch(pe, 1);
        __builtin_prefetch(pe + HP_CACHELINE, 1);
    }
    uint32_t now = hp_now_ms(), cpu = hp_cpu();
    if (tl->depth) {
        /* A signal handler freeing while this thread is inside the shim: leave the event
         * for the interrupted call to apply when it finishes. */
        struct hp_thread *t = tl->thread;
        struct deferred d = {DEF_FREE, ctx, alloc_ms, alloc_cpu, now, cpu, size};
        if (t)
            defer_event(t, &d);
        return; /* more than DEFER_MAX deferred events: the event is dropped */
    }
    tl->depth = HP_DEPTH_EVENT;
    struct hp_thread *t = thread_get();
    if (t) {
        int fast = hp_olock_own(&t->lock);
        /* First what handlers left: the block may be one a handler allocated. */
        if (HP_UNLIKELY(t->ndef))
            run_deferred(t);
        free_event(t, ctx, size, alloc_ms, alloc_cpu, now, cpu);
        if (t->ndef)
            run_deferred(t);
        hp_olock_disown(&t->lock, fast);
    } else {
        free_event(NULL, ctx, size, alloc_ms, alloc_cpu, now, cpu);
    }
    tl->depth = 0;
    if (HP_UNLIKELY(hp_dump_pending))
        hp_run_pending();
}

void hp_profile_thread_tables(uint64_t *entries, uint64_t *sets)
{
    struct hp_thread *t = hp_tls.thread;
    *entries = t ? t->tmask + 1 : 0;
    *sets = t ? t->smask + 1 : 0;
}

/* The caches of threads that did not survive a fork (hp_profile_fork_child) are folded in
 * two parts. At the fork, their live and allocation counters go to the contexts, read from the
 * entries without writing them (so the entries' pages stay shared with the parent), which
 * keeps every context's counters, and so the child's peak figures, exact from its first
 * event. Their HIBs wait in the entries until the child's first dump (fold_orphan): merging
 * them writes the shared table and the entries, and copying those pages cost a child whose
 * parent had 8 threads of 4,096 contexts each 9 ms, for nothing when the child execs. */
static void orphan_counters(struct hp_thread *t)
{
    for (uint64_t i = 0; i <= t->tmask; i++) {
        const struct tentry *e = &t->entries[i];
        struct hp_ctx *c = e->ctx_id ? entry_ctx(e) : NULL;
        int64_t lc, ls;
        if (c)
            add_to_context(c, e, &lc, &ls);
    }
    publish_global(t);
    t->alive = 0;
    t->orphan = 1;
}

/* The rest of an orphan's cache, at the child's first dump: its HIBs into the shared table.
 * Its counters are in the contexts already. With the thread's lock held. */
static void fold_orphan(struct hp_thread *t)
{
    for (uint64_t i = 0; i <= t->tmask; i++) {
        struct tentry *e = &t->entries[i];
        if (e->ctx_id) {
            if (e->hib.alloc_count)
                table_merge(e->ctx_id, &e->hib);
            e->ctx_id = 0;
        }
    }
    t->ndirty = 0;
    t->dirty_overflow = 0;
    t->orphan = 0;
}

/* Every cache's lock, taken from its owner (the registry held): one barrier for all of them. */
static void take_all(struct hp_thread *first)
{
    for (struct hp_thread *t = first; t; t = t->next_all)
        hp_olock_claim(&t->lock);
    hp_olock_barrier();
    for (struct hp_thread *t = first; t; t = t->next_all)
        hp_olock_wait(&t->lock);
}

/* Before a seccomp filter: owners take their locks with an exchange from now on (lock.h). The
 * registry keeps flushes and forks from taking locks meanwhile. */
void hp_profile_before_sandbox(void)
{
    hp_lock(&registry_lock);
    if (hp_olock_asym) {
        for (struct hp_thread *t = all_threads; t; t = t->next_all)
            hp_olock_set_symmetric(&t->lock);
        hp_olock_symmetric();
    }
    hp_unlock(&registry_lock);
}

/* Every thread's cache is taken at one moment: all their locks first (the registry held, so
 * that no cache is made meanwhile), then each flushed and let go. A cache flushed while another
 * thread still recorded would let the dump count the free of a block allocated after the
 * allocating thread's flush (a block one thread allocates and another frees): alloc_count one
 * above allocs (busy-dumps-shared: one interval dump in ten, before). Taken this way, every
 * thread's changes stop at the moment its lock was taken, and a block's allocation is
 * recorded before the program has its address, so every free the dump counts has its
 * allocation counted too. A thread waits for the flushes before its own. */
void hp_profile_flush_all(void)
{
    flusher = &hp_tls;
    hp_lock(&registry_lock);
    struct hp_thread *first = all_threads;
    take_all(first);
    hp_unlock(&registry_lock);
    /* Only now, with every lock taken: a thread in an event that must move (an entry displaced)
     * waits for the dump with its own lock held, which the flush must have taken first. */
    __atomic_store_n(&flushing, 1, __ATOMIC_SEQ_CST);
    struct hp_thread *folded = NULL; /* orphans folded now, by next_free */
    for (struct hp_thread *t = first; t; t = t->next_all) {
        if (t->alive) {
            flush_thread(t);
        } else if (t->orphan) {
            fold_orphan(t);
            t->next_free = folded;
            folded = t;
        }
        hp_olock_release(&t->lock);
    }
    if (folded) { /* caches for the child's next new threads */
        hp_lock(&registry_lock);
        while (folded) {
            struct hp_thread *t = folded;
            folded = t->next_free;
            t->next_free = free_threads;
            free_threads = t;
        }
        hp_unlock(&registry_lock);
    }
}

static uint64_t pages(uint64_t bytes) { return (bytes + 4095) & ~(uint64_t)4095; }

static uint64_t bucket_count(uint64_t max_contexts)
{
    return hp_round_pow2(max_contexts / 16 < 4096 ? 4096 : max_contexts / 16);
}

/* Address space the profiler's tables take for these sizes. */
static uint64_t table_bytes(uint64_t max_contexts, uint64_t hib_size, uint64_t nways)
{
    uint64_t ns = hp_round_pow2(hib_size / nways);
    return pages(bucket_count(max_contexts) * sizeof(struct hp_ctx *)) +
           pages((max_contexts + 1) * sizeof(struct hp_ctx *)) + pages(ns * sizeof(struct set)) +
           pages(ns * nways * sizeof(struct slot));
}

/* The tables are made at full size at once (their pages are touched only as contexts come):
 * with max_contexts and hib_table_size at their defaults that is 19 MiB of address space. A
 * small metadata budget, or an address-space limit (ulimit -v; the bare program may need all
 * of it), gets tables for fewer contexts, at most half the budget and a sixteenth of the
 * limit, and one line saying so. */
static void fit_tables(void)
{
    uint64_t limit = hp_meta_budget() / 2, mc = hp_opt.max_contexts, hs = hp_opt.hib_table_size;
    uint64_t nways = hp_opt.hib_table_ways, as = hp_soft_limit(RLIMIT_AS);
    int by_as = as / 16 < limit;
    if (by_as)
        limit = as / 16;
    while (table_bytes(mc, hs, nways) > limit && (mc > 4096 || hs > 1024)) {
        if (mc > 4096)
            mc /= 2;
        if (hs > 1024 && hs / 2 >= nways)
            hs /= 2;
        else if (mc <= 4096)
            break;
    }
    if (mc == hp_opt.max_contexts && hs == hp_opt.hib_table_size)
        return;
    /* A budget that small is the user's choice, and said; a limit is the environment's, and
     * said with verbosity=2 only (the profile counts allocations of contexts past the limit). */
    void (*say)(const char *, ...) __attribute__((format(printf, 1, 2))) = by_as ? hp_info : hp_warn;
    say("tables for %llu contexts and %llu HIB table entries (max_contexts=%llu, "
        "hib_table_size=%llu) to fit %s of %llu MiB",
        (unsigned long long)mc, (unsigned long long)hs, (unsigned long long)hp_opt.max_contexts,
        (unsigned long long)hp_opt.hib_table_size,
        by_as ? "the address-space limit (ulimit -v)" : "metadata_budget_mb",
        (unsigned long long)((by_as ? as : hp_meta_budget()) >> 20));
    hp_opt.max_contexts = mc;
    hp_opt.hib_table_size = hs;
}

void hp_profile_init(void (*evict)(const struct hpf_hib *))
{
    evict_sink = evict;
    fit_tables();
    hp_prof.max_id = (uint32_t)hp_opt.max_contexts + 1;
    hp_prof.next_id = 1;
    /* One bucket per 16 possible contexts: the array (512 KiB by default) is touched all over
     * as soon as a few thousand contexts exist, so it is kept small; chains stay short until
     * the depot is far fuller than most programs get, and only threads' stack-cache misses
     * walk them. */
    uint64_t nb = bucket_count((uint64_t)hp_opt.max_contexts);
    buckets = hp_meta_map(nb * sizeof *buckets);
    hp_prof.by_id = hp_meta_map((size_t)hp_prof.max_id * sizeof *hp_prof.by_id);
    ways = hp_opt.hib_table_ways;
    nsets = hp_round_pow2(hp_opt.hib_table_size / ways);
    sets = hp_meta_map(nsets * sizeof *sets);
    slots = hp_meta_map(nsets * ways * sizeof *slots);
    tmask_max = hp_opt.thread_cache_size - 1;
    hp_prof.slack = hp_opt.peak_slack_kb * 1024;
    hp_prof.peak_dump_at = hp_opt.dump_peak_growth ? (uint64_t)1 << 20 : 0;
    if (!buckets || !hp_prof.by_id || !sets || !slots) {
        uint64_t mib = (table_bytes(hp_opt.max_contexts, hp_opt.hib_table_size, ways) + (1u << 20) - 1) >> 20;
        uint64_t as = hp_soft_limit(RLIMIT_AS);
        int e = __atomic_load_n(&hp_meta_map_errno, __ATOMIC_RELAXED);
        if (!e)
            hp_error("metadata budget too small for the profiler's tables (%llu MiB); profiling is off",
                     (unsigned long long)mib);
        else if (e == ENOMEM && as != UINT64_MAX)
            hp_error("cannot map the profiler's tables (%llu MiB) under the address-space limit of "
                     "%llu MiB (ulimit -v); profiling is off", (unsigned long long)mib,
                     (unsigned long long)(as >> 20));
        else
            hp_error("cannot map the profiler's tables (%llu MiB, errno %d); profiling is off",
                     (unsigned long long)mib, e);
        hp_profiling = 0;
        return;
    }
    bucket_mask = nb - 1;
    exit_key_ok = pthread_key_create(&exit_key, thread_exit) == 0;
    hp_profiling = 1;
}

/* The sets fork_prepare locked: those the context ids so far map to (set_of). The others
 * were never touched, and no context is made until the fork is over (every thread's cache is
 * taken, the dump lock held). Locking all of them (8,192 by default, 32 pages) made every fork
 * copy their pages twice, in the parent and in the child, and faulted them all in at the
 * first. */
static uint64_t fork_sets;

/* Fork: the child must find every structure consistent, so the parent holds all locks across
 * fork(). Order: registry, each thread (list order), table sets in use, peak. (The dump lock is
 * taken before these, the spool lock and the metadata lock after them: init.c.) */
void hp_profile_fork_prepare(void)
{
    hp_lock(&registry_lock);
    take_all(all_threads);
    uint64_t used = __atomic_load_n(&hp_prof.next_id, __ATOMIC_ACQUIRE) / ways + 1;
    fork_sets = used < nsets ? used : nsets;
    for (uint64_t i = 0; i < fork_sets; i++)
        hp_lock(&sets[i].lock);
    hp_lock(&peak_lock);
}

void hp_profile_fork_parent(void)
{
    hp_unlock(&peak_lock);
    for (uint64_t i = fork_sets; i-- > 0;)
        hp_unlock(&sets[i].lock);
    for (struct hp_thread *t = all_threads; t; t = t->next_all)
        hp_olock_release(&t->lock);
    hp_unlock(&registry_lock);
}

void hp_profile_fork_child(void)
{
    hold = moving = flushing = 0; /* no dump runs in the child, nor any other thread's move */
    hp_lock_reset(&peak_lock);
    for (uint64_t i = 0; i < fork_sets; i++)
        hp_lock_reset(&sets[i].lock);
    /* Only the forking thread survives: the others' counters go to the contexts now, their
     * HIBs at the child's first dump (orphan_counters). */
    struct hp_thread *self = hp_tls.thread;
    for (struct hp_thread *t = all_threads; t; t = t->next_all) {
        hp_olock_reset(&t->lock);
        if (t->alive && t != self && t->ndef)
            run_deferred(t); /* events its signal handlers left: rare (they write its entries) */
    }
    hp_lock_reset(&registry_lock);
    /* This is the only thread now: plain additions to the contexts, not atomic ones (one per
     * counter of every entry of every thread that did not survive). */
    int was_multi = multi;
    multi = 0;
    for (struct hp_thread *t = all_threads; t; t = t->next_all)
        if (t->alive && t != self)
            orphan_counters(t);
    multi = was_multi;
    /* After several threads every context holds its values for the current peak generation
     * (they are copied in full while several threads run): the surviving thread's cache goes
     * on from there, with its counters pushed, so that its entries' bases are the contexts'
     * values (other threads moved them since its last push) and base + delta is exact again.
     * After one, contexts may still wait for their lazy copy (copy_at_peak), which the
     * child's cache entries must still trigger. */
    if (self && multi) {
        for (uint64_t i = 0; i <= self->tmask; i++) {
            struct tentry *e = &self->entries[i];
            if (e->ctx_id) {
                push_entry_live(e);
                struct hp_ctx *c = entry_ctx(e);
                e->base_count = __atomic_load_n(&c->live_count, __ATOMIC_RELAXED);
                e->base_size = __atomic_load_n(&c->live_size, __ATOMIC_RELAXED);
                e->peak_gen = hp_prof.peak_gen;
            }
        }
        self->ndirty = 0;
        self->dirty_overflow = 0;
        publish_global(self);
    }
    multi = 0;
}
