/* shim/profile's private state, shared by its files (profile.h is the folder's API): the thread
 * cache layout, the registry of caches, the counters shared by threads and the inline helpers
 * of the allocation/free recording path (record.c), which must stay inline there.
 *
 * Allocation profiling: every allocation is attributed to its call stack (stack depot), every
 * free becomes a block event merged into a per-thread cache of partial HIBs, and those flow into
 * one set-associative shared HIB table whose evicted entries go to the profile at once.
 *
 * Hot paths take only their own thread's lock (contended only by a dump or fork). Live-heap
 * counters are pushed from the thread to the contexts and the global totals on every event
 * while the process has one thread, and in batches of peak_slack_kb once it has more; that
 * batching is the only source of error in the peak figures (documented in docs/FORMAT.md). */
#ifndef HP_PROFILE_INTERNAL_H
#define HP_PROFILE_INTERNAL_H

#include "profile/profile.h"
#include "unwind/unwind.h"
#include "rt/rt.h"

/* ---------- counters shared by threads (threads.c sets hp_prof_multi) ---------- */

extern int hp_prof_multi; /* set before a second thread can exist */

static inline void hp_add_i64(int64_t *p, int64_t d)
{
    if (hp_prof_multi)
        __atomic_fetch_add(p, d, __ATOMIC_RELAXED);
    else
        __atomic_store_n(p, __atomic_load_n(p, __ATOMIC_RELAXED) + d, __ATOMIC_RELAXED);
}

static inline void hp_add_u64(uint64_t *p, uint64_t d) { hp_add_i64((int64_t *)p, (int64_t)d); }

static inline void hp_max_u64(uint64_t *p, uint64_t v)
{
    uint64_t cur = __atomic_load_n(p, __ATOMIC_RELAXED);
    if (!hp_prof_multi) {
        if (v > cur)
            __atomic_store_n(p, v, __ATOMIC_RELAXED);
        return;
    }
    while (v > cur && !__atomic_compare_exchange_n(p, &cur, v, 1, __ATOMIC_RELAXED, __ATOMIC_RELAXED))
        ;
}

static inline void hp_min_u64(uint64_t *p, uint64_t v)
{
    uint64_t cur = __atomic_load_n(p, __ATOMIC_RELAXED);
    if (!hp_prof_multi) {
        if (v < cur)
            __atomic_store_n(p, v, __ATOMIC_RELAXED);
        return;
    }
    while (v < cur && !__atomic_compare_exchange_n(p, &cur, v, 1, __ATOMIC_RELAXED, __ATOMIC_RELAXED))
        ;
}

static inline void hp_min_u32(uint32_t *p, uint32_t v)
{
    uint32_t cur = __atomic_load_n(p, __ATOMIC_RELAXED);
    if (!hp_prof_multi) {
        if (v < cur)
            __atomic_store_n(p, v, __ATOMIC_RELAXED);
        return;
    }
    while (v < cur && !__atomic_compare_exchange_n(p, &cur, v, 1, __ATOMIC_RELAXED, __ATOMIC_RELAXED))
        ;
}

static inline void hp_max_u32(uint32_t *p, uint32_t v)
{
    uint32_t cur = __atomic_load_n(p, __ATOMIC_RELAXED);
    if (!hp_prof_multi) {
        if (v > cur)
            __atomic_store_n(p, v, __ATOMIC_RELAXED);
        return;
    }
    while (v > cur && !__atomic_compare_exchange_n(p, &cur, v, 1, __ATOMIC_RELAXED, __ATOMIC_RELAXED))
        ;
}

/* ---------- the peak (peak.c) ---------- */

extern hp_lock_t hp_peak_lock;

/* Per-context values at the global peak. When the heap first shrinks after a new peak, every
 * context's live counters are its values at the peak. With several threads they are copied from
 * every context there and then (one pass, so only when the peak grew by more than 1% since the
 * last one; the counters are at most the slack behind). With one thread the copy is lazy: the
 * peak generation is bumped, and a context's values are copied the first time it changes after
 * that (or when the dump finds it unchanged), so a request costs nothing and the values are
 * exact. hp_peak_lock orders requests, passes and dumps. */
static inline void hp_copy_at_peak(struct hp_ctx *c, int64_t lc, int64_t ls)
{
    c->peak_live_count = lc > 0 ? (uint64_t)lc : 0;
    c->peak_live_size = ls > 0 ? (uint64_t)ls : 0;
    c->peak_gen = hp_prof.peak_gen;
}

void hp_copy_stale_contexts(int all);
HP_COLD void hp_peak_request_if_pending(void);
__attribute__((noinline)) void hp_new_peak(int64_t now_size, int64_t now_count, uint32_t now_ms);

/* Apply a change of the process's live heap at time now_ms. Called with fresh per-context
 * counters. */
static inline void hp_global_live(int64_t dsize, int64_t dcount, uint32_t now_ms)
{
    int64_t now_size, now_count;
    if (hp_prof_multi) {
        now_size = __atomic_add_fetch(&hp_prof.live_size, dsize, __ATOMIC_RELAXED);
        now_count = __atomic_add_fetch(&hp_prof.live_count, dcount, __ATOMIC_RELAXED);
    } else {
        now_size = hp_prof.live_size += dsize;
        now_count = hp_prof.live_count += dcount;
    }
    if (HP_UNLIKELY(now_size > 0 &&
                    (uint64_t)now_size > __atomic_load_n(&hp_prof.peak_size, __ATOMIC_RELAXED)))
        hp_new_peak(now_size, now_count, now_ms);
}

/* ---------- the shared HIB table (table.c) ---------- */

static inline uint64_t hp_pages(uint64_t bytes) { return (bytes + 4095) & ~(uint64_t)4095; }

/* ar: the access figures of run's blocks that have them (NULL: none). */
struct acc_run;
void hp_table_merge(uint32_t ctx_id, const struct hp_hib_run *run, const struct acc_run *ar);
void hp_table_add(uint32_t ctx_id, const struct hp_block_event *e); /* one block, with figures */
uint64_t hp_table_bytes(uint64_t hib_size, uint64_t nways); /* address space of its arrays */
/* Map the table (hp_opt's hib_table_*); evicted HIBs go to evict. 0: no memory for it. */
int hp_table_map(void (*evict)(const struct hpf_hib *));
void hp_table_fork_prepare(void); /* lock the sets in use */
void hp_table_fork_parent(void);
void hp_table_fork_child(void);

/* ---------- the stack depot (depot.c) ---------- */

uint64_t hp_depot_buckets(uint64_t max_contexts);
int hp_depot_map(void); /* the buckets and hp_prof.by_id; 0: no memory for them */
HP_COLD struct hp_ctx *hp_depot_get(const uintptr_t *pcs, int n, uint64_t h, int nested);

/* ---------- moves out of thread caches while a dump is written (hold.c) ---------- */

/* Set while a dump is written (hp_profile_hold): threads keep their changes in their caches,
 * so what the dump reads from the contexts and the shared table is one moment. A thread that
 * moves changes out of its cache (a push, an entry displaced, the thread leaving, an event
 * without a cache) counts itself in hp_cache_moving first and looks at hp_cache_hold after; the
 * dump sets hp_cache_hold first and waits for hp_cache_moving to drop to 0 after (both
 * sequentially consistent), so either the thread sees the hold or the dump sees the thread and
 * waits for its move to end. Otherwise the dump could read a context's counters before a move
 * and its HIB after it. */
extern int hp_cache_hold, hp_cache_moving;

/* Set by a dump from the moment its flush holds every thread's lock to its hold
 * (hp_profile_flush_all, hp_profile_hold). Moves wait for it as for the hold, but for the
 * flushing thread's own (the events of other threads' signal handlers it applies): a thread
 * flushed already that pushed before the hold could bring in the free of a block whose
 * allocation another thread made after its own flush, and the dump would count the one without
 * the other. Such a thread may wait with its own lock held (an entry displaced in an event):
 * the flush took that lock before setting this, and no longer needs it. */
extern int hp_cache_flushing;
extern struct hp_tls *hp_cache_flusher;

static inline int hp_moves_held(void)
{
    return __atomic_load_n(&hp_cache_hold, __ATOMIC_SEQ_CST) ||
           (__atomic_load_n(&hp_cache_flushing, __ATOMIC_SEQ_CST) && hp_cache_flusher != &hp_tls);
}

/* Start a move unless a dump is being written (0: it is). */
static inline int hp_move_try(void)
{
    __atomic_add_fetch(&hp_cache_moving, 1, __ATOMIC_SEQ_CST);
    if (!hp_moves_held())
        return 1;
    __atomic_sub_fetch(&hp_cache_moving, 1, __ATOMIC_RELEASE);
    return 0;
}

void hp_move_begin(void); /* start a move, waiting for the dump being written, if any */
static inline void hp_move_end(void) { __atomic_sub_fetch(&hp_cache_moving, 1, __ATOMIC_RELEASE); }

/* ---------- per-thread caches ---------- */

/* A thread's entry for one context: three cache lines, of which an allocation touches the
 * first and the third and a free the first two. Each line an event touches is a likely cache
 * miss, which is much of what python3's allocation and free paths wait on (bench/model.sh). */
struct tentry {
    /* line 0: allocations and frees */
    uint32_t ctx_id;
    uint32_t peak_gen; /* with one thread: the context's values at the peak are copied */
    int64_t d_live_count, d_live_size, d_live_ts;
    uint32_t first_ms, last_ms;
    uint32_t dirty;
    uint32_t pad;
    /* lines 0 (its four counters) and 1: the blocks freed (format.h) */
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

/* The access figures of the blocks a thread entry's HIB holds that were freed with figures from
 * the shadow, in an array beside the entries (struct hp_thread's acc, same index), made at the
 * thread's first such free: the entries keep their three lines for programs without access
 * data. Flushed into the shared table with the entry's HIB (hp_table_merge) and reset with it. */
struct acc_run {
    uint64_t n; /* blocks with figures, at most the entry's hib.alloc_count */
    uint64_t tot_a, min_a, max_a, tot_w, min_w, max_w, tot_u;
    uint32_t min_u, max_u;
    uint64_t *hist; /* the entry's context's histogram, once looked up (kept across flushes) */
    uint64_t bins[HP_ACC_BINS]; /* small blocks' histograms (struct hp_access), for hist */
};
/* The histogram of context ctx (made on first use; NULL without memory for it). */
uint64_t *hp_ctx_hist(uint32_t ctx);
/* Add n bins to context ctx's histogram (hist, or looked up when NULL), atomically. */
void hp_hist_add_bins(uint32_t ctx, uint64_t *hist, const uint64_t *bins, uint32_t n);

static inline void acc_run_clear(struct acc_run *ar)
{
    uint64_t *hist = ar->hist;
    *ar = (struct acc_run){0};
    ar->hist = hist;
}

static inline void acc_run_add(uint32_t ctx, struct acc_run *ar, const struct hp_access *a)
{
    if (a->nbins) {
        if (HP_UNLIKELY(!ar->hist))
            ar->hist = hp_ctx_hist(ctx); /* (NULL: looked up again here or at the flush) */
        for (uint32_t i = 0; i < a->nbins; i++)
            ar->bins[i] += a->bins[i];
    }
    if (ar->n == 0) {
        ar->min_a = ar->max_a = a->accesses;
        ar->min_w = ar->max_w = a->writes;
        ar->min_u = ar->max_u = a->percent_utilized;
    } else {
        ar->min_a = hp_min64(ar->min_a, a->accesses);
        ar->max_a = hp_max64(ar->max_a, a->accesses);
        ar->min_w = hp_min64(ar->min_w, a->writes);
        ar->max_w = hp_max64(ar->max_w, a->writes);
        ar->min_u = a->percent_utilized < ar->min_u ? a->percent_utilized : ar->min_u;
        ar->max_u = a->percent_utilized > ar->max_u ? a->percent_utilized : ar->max_u;
    }
    ar->n++;
    ar->tot_a += a->accesses;
    ar->tot_w += a->writes;
    ar->tot_u += a->percent_utilized;
}

/* The context of entry e (entries hold only its id: the pointer is needed only when pushing). */
static inline struct hp_ctx *hp_entry_ctx(const struct tentry *e)
{
    return __atomic_load_n(&hp_prof.by_id[e->ctx_id], __ATOMIC_ACQUIRE);
}

#define HP_DEFER_MAX 128
#define HP_DIRTY_MAX 256

/* An event of a signal handler that interrupted this thread while it recorded one of its own:
 * applied, in the order they came, when the interrupted call is done with the thread's cache. */
enum { DEF_FREE, DEF_ALLOC, DEF_FREE_ACCESS };

struct deferred {
    uint32_t kind, ctx, alloc_ms, alloc_cpu, dealloc_ms, dealloc_cpu;
    uint64_t size;
    struct hp_access acc; /* DEF_FREE_ACCESS: the block's access figures */
};

/* Recently seen stacks of this thread, by 64-bit stack hash: two-way sets, the most recently
 * used way first. A hit is trusted without comparing frames (two live stacks colliding in 64
 * bits is far less likely than a bit flip), which keeps the context's own memory off the
 * allocation path; the depot itself compares frames. In front of it a small direct-mapped
 * table of the stacks allocated from a moment ago: a loop allocates from a handful of stacks
 * over and over (64 entries catch 92% of the allocations of bench/run.sh's python3 workload,
 * 99% of its sqlite3's), and 1 KiB stays in the level-1 cache where the 128 KiB of the sets
 * do not. */
#define HP_SCACHE_SETS 4096
#define HP_RECENT_LOG 6

/* A thread's stack cache and context entries start small and grow fourfold, up to their full
 * size, once the thread keeps missing or displacing: most threads of a many-threaded server
 * allocate from a handful of stacks, and full-size tables (1.2 MiB of metadata a thread) would
 * run a thousand threads into the metadata budget. */
#define HP_SCACHE_SETS_MIN 256
#define HP_TCACHE_MIN 256

struct scache_entry {
    uint64_t hash;
    uint32_t id; /* 0: empty */
    uint32_t pad;
};

struct hp_thread {
    /* What every event reads or writes, in one line. */
    hp_olock_t lock; /* the owner's events; a dump's flush and a fork from others (rt.h) */
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
    int orphan; /* in a forked child, a thread that did not survive the fork: see hp_fold_orphan */
    uint64_t truncs; /* allocations with a truncated stack, not yet added to hp_counters */
    struct hp_thread *next_all, *next_free;
    struct scache_entry recent[1 << HP_RECENT_LOG]; /* by the hash's top bits */
    uintptr_t pcs[256 + HP_STACK_SLACK]; /* capture buffer (see hp_stack_capture) */
    uintptr_t npcs[256 + HP_STACK_SLACK]; /* the same for a signal handler's allocation */
    int nested; /* a signal handler's allocation is being recorded (npcs in use) */
    struct hp_walk_cache walk;           /* the previous stack walk (unwind.h) */
    struct acc_run *acc; /* beside entries, tmask + 1 of them; NULL until a free with figures */
    uint32_t dirty[HP_DIRTY_MAX];
    struct deferred def[HP_DEFER_MAX];
} __attribute__((aligned(HP_CACHELINE)));

_Static_assert(__builtin_offsetof(struct hp_thread, scache) == HP_CACHELINE,
               "the fields of every event fill the first line");

/* Every thread cache ever made (by next_all) and those free for a new thread (by next_free),
 * under hp_registry_lock. */
extern struct hp_thread *hp_all_threads, *hp_free_threads;
extern hp_lock_t hp_registry_lock;

/* threads.c: a thread's cache made, its entry for a context made, its stack cache grown */
HP_COLD struct tentry *hp_entry_new(struct hp_thread *t, struct tentry *e, struct hp_ctx *c,
                                    uint32_t id);
HP_COLD struct hp_thread *hp_thread_new(void);
HP_COLD void hp_grow_scache(struct hp_thread *t);
void hp_threads_init(void); /* after the tables: the thread-exit key, the caches' size */

/* One thread: the first change to a context since the peak generation began. Its value until
 * now, the pushed counters plus this thread's deltas, is its value at the peak. */
static inline void hp_snap_entry(struct tentry *e)
{
    if (HP_UNLIKELY(!hp_prof_multi && e->peak_gen != hp_prof.peak_gen)) {
        struct hp_ctx *c = hp_entry_ctx(e);
        if (c->peak_gen != hp_prof.peak_gen)
            hp_copy_at_peak(c, e->base_count + e->d_live_count, e->base_size + e->d_live_size);
        e->peak_gen = hp_prof.peak_gen;
    }
}

static inline uint64_t hp_entry_slot(uint32_t id, uint64_t mask) { return (id * 0x9e3779b1u) & mask; }

/* The thread's cache entry for context id (c: the context if the caller has it). */
static inline struct tentry *hp_entry_for(struct hp_thread *t, struct hp_ctx *c, uint32_t id)
{
    struct tentry *e = &t->entries[hp_entry_slot(id, t->tmask)];
    if (HP_LIKELY(e->ctx_id == id))
        return e;
    return hp_entry_new(t, e, c, id);
}

static inline struct hp_thread *hp_thread_get(void)
{
    struct hp_thread *t = hp_tls.thread;
    if (HP_LIKELY(t != NULL))
        return t;
    return hp_thread_new();
}

/* push.c */
int hp_add_to_context(struct hp_ctx *c, const struct tentry *e, int64_t *lc, int64_t *ls);
void hp_push_entry_live(struct tentry *e);
void hp_push_all(struct hp_thread *t);
void hp_publish_global(struct hp_thread *t);
void hp_publish(struct hp_thread *t);
void hp_flush_entry(struct hp_thread *t, struct tentry *e); /* push all of it, HIB included */
void hp_flush_thread(struct hp_thread *t);

/* hold.c */
void hp_take_all(struct hp_thread *first);

/* record.c */
HP_COLD void hp_run_deferred(struct hp_thread *t);

/* fork.c */
void hp_fold_orphan(struct hp_thread *t);

#endif
