/* shim/profile: allocation profiling in memory: the stack depot (contexts), the shared HIB
 * table, the per-thread caches that batch block events into it, the peak, and the counters of
 * the summary. No I/O: dump/ reads what is here through the functions below, and evicted HIBs
 * leave through the sink the caller gives hp_profile_init. */
#ifndef HP_PROFILE_H
#define HP_PROFILE_H

#include <stdint.h>

#include "format/format.h"
#include "rt/rt.h"

/* ---- recording (record.c; set up in init.c, fork handlers in fork.c) ---- */
extern int hp_profiling; /* profile=1 and the profiler is set up (hp_profile_init) */
/* evict: where a HIB the shared table has no room for goes (dump/'s spool), under the table's
 * locks; NULL drops it. */
void hp_profile_init(void (*evict)(const struct hpf_hib *));
/* On allocation: returns the context id for the header (0 if not profiled) and accounts it.
 * frame: the frame address of a shim function that is still running (the entry point's), where
 * the stack walk may start instead of at its own frame; 0: no such hint. */
uint32_t hp_profile_alloc_at(uint64_t size, uint32_t now_ms, uint32_t cpu, uintptr_t frame);
uint32_t hp_profile_alloc(uint64_t size, uint32_t now_ms, uint32_t cpu);
/* On free of a block whose header says it was profiled. */
void hp_profile_free(uint32_t ctx, uint64_t size, uint32_t alloc_ms, uint32_t alloc_cpu);

/* ---- access profiling (access.c): figures core/ takes from the access shadow ---- */
/* A freed block's figures from the shadow. A block of at most HP_ACC_BINS granules brings its
 * histogram along (nbins bins; 0: added to the context's already, or none): the thread's cache
 * sums it per context and adds the sums to the context's histogram when it is flushed, so a
 * free writes no line other threads write, and needs no atomic addition (bench/alloc_bench
 * -t 2 built with heapprof-cc spent 12% of its time in the locked additions, perf). */
#define HP_ACC_BINS 8
struct hp_access {
    uint64_t accesses, writes;
    uint32_t percent_utilized;
    uint32_t nbins;
    uint64_t bins[HP_ACC_BINS];
};
/* hp_profile_free of a block freed while the shadow is on: its HIB gets its access figures,
 * which the thread's cache sums per context beside its running HIB. */
void hp_profile_free_access(uint32_t ctx, uint64_t size, uint32_t alloc_ms, uint32_t alloc_cpu,
                            const struct hp_access *a);
/* A context's access state, made the first time it has access figures (metadata arena):
 * its histogram, and what a dump folds in of its live blocks. */
struct hp_ctx_access {
    /* The live blocks a dump found for the context (dump/, under the dump lock): the access
     * fields (and alloc_count) of hp_hib_add over them, valid when live_seq is that dump's. */
    struct hpf_hib live;
    uint32_t live_seq;
    uint32_t word_bins; /* hp_word_bins, or 0: made before per-word histograms were on */
    /* 2 * hp_hist_bins counters: bin i of the freed blocks' histogram (accesses to granule i,
     * granule 0 the one holding a block's first byte; atomic adds), then the same for the live
     * blocks of the dump live_seq names. Then 4 * hp_word_bins counters (hp_hist_words): the
     * per-word histogram of freed blocks (accesses to word i), of live blocks, and for each the
     * count of blocks whose word i saturated. */
    uint64_t hist[];
};
/* Bins of a histogram: hp_opt.access_hist_granules, fixed at init; 0: no histograms. */
extern uint32_t hp_hist_bins;
/* Bins of a per-word histogram: hp_opt.access_word_hist_max / 8 rounded up, fixed at init. */
extern uint32_t hp_word_bins;
/* Set (by core/) once a callback module has the shadow's word plane: access states made from
 * then on have room for per-word histograms, so programs without one (inline builds) pay no
 * memory for them. A context whose state was made before has none. */
extern int hp_word_hists_on;
/* The per-word parts of the counters at hist (a struct hp_ctx_access's); all NULL when the
 * state has none. */
struct hp_word_hist {
    uint64_t *freed, *live, *freed_sat, *live_sat;
};
static inline struct hp_word_hist hp_hist_words(uint64_t *hist)
{
    const struct hp_ctx_access *a =
        (const struct hp_ctx_access *)((char *)hist - __builtin_offsetof(struct hp_ctx_access, hist));
    struct hp_word_hist h = {NULL, NULL, NULL, NULL};
    if (!a->word_bins)
        return h;
    uint64_t *w = hist + 2 * (size_t)hp_hist_bins;
    h.freed = w;
    h.live = w + a->word_bins;
    h.freed_sat = w + 2 * (size_t)a->word_bins;
    h.live_sat = w + 3 * (size_t)a->word_bins;
    return h;
}
/* The access state of context ctx, made if need be; NULL for no such context or no memory.
 * may_wait: the caller holds none of the shim's locks (a dump); else, inside the shim, making
 * it gives up rather than wait for the metadata arena. */
struct hp_ctx_access *hp_ctx_access(uint32_t ctx, int may_wait);
/* Where the shadow adds the accesses of a block of ctx that covers `granules` granules, as
 * shadow.h's hist (hp_hist_bins counters); NULL: no histogram for it (too large, none kept). */
uint64_t *hp_profile_hist(uint32_t ctx, uint64_t granules);
/* The counters of ctx's histograms (struct hp_ctx_access's hist), whatever a block's size;
 * NULL: none (no such context, no memory). */
uint64_t *hp_profile_hists(uint32_t ctx);
/* Before a seccomp filter is installed (creds.c): thread locks without membarrier from now. */
void hp_profile_before_sandbox(void);
void hp_profile_fork_prepare(void);
void hp_profile_fork_parent(void);
void hp_profile_fork_child(void);
void hp_note_threads(void); /* a second thread may exist from now on */
/* Called as a thread that made events ends, before its cache is flushed (core/ sets it: the
 * registry of live blocks gives back what the thread keeps). */
extern void (*hp_profile_thread_exit_hook)(void);
uint64_t hp_profile_slack_bound(void); /* bound on the error of the peak figures */

/* ---- counters for the summary ---- */
struct hp_counters {
    uint64_t foreign_frees, double_frees, unprofiled_allocs, truncated_stacks, evicted_hibs;
    uint64_t page_probes; /* mincore calls of the free path (not in the profile) */
    uint64_t pool_unknown_frees, pool_dropped; /* the pool API's (core/pool.c) */
    /* An allocator profiled without headers (core/headerless.c): blocks whose free was not
     * seen, found dead when the allocator handed their address out again. */
    uint64_t headerless_unseen_frees;
};
/* 1 when the allocator is profiled without headers (set by core/ at init). */
extern int hp_profile_headerless;
extern struct hp_counters hp_counters;
static inline void hp_count(uint64_t *c) { __atomic_fetch_add(c, 1, __ATOMIC_RELAXED); }

/* ---- what a dump reads ---- */
/* Data structures of the profiler shared by profile/ (recording) and dump/ (writing). */

/* One allocation context: a call stack in the depot, with its live-heap counters. Lives in the
 * metadata arena forever. Counters are pushed here from thread caches (push.c). */
struct hp_ctx {
    struct hp_ctx *next; /* hash chain */
    uint64_t hash;
    uint32_t id, depth;
    int64_t live_count, live_size, live_ts; /* live_ts: sum of alloc_ms of live blocks */
    uint64_t allocs, bytes;
    uint64_t max_live_count, max_live_size;
    uint64_t peak_live_count, peak_live_size;
    uint64_t min_size, max_size; /* over every allocation of the context */
    uint32_t first_alloc_ms, last_alloc_ms;
    uint32_t peak_gen; /* the peak generation peak_live_* belong to (hp_prof.peak_gen) */
    uint32_t flags;    /* HPF_LIVE_* of the blocks it saw (hp_profile_ctx_flag) */
    struct hp_ctx_access *access; /* NULL until the context has access figures */
    uintptr_t pcs[];
};

/* Global state the dump needs. Fields written on hot paths each get their own cache line so
 * threads reading the read-mostly ones do not pay for them. */
struct hp_prof {
    struct hp_ctx **by_id;
    uint32_t max_id; /* ids are 1..max_id-1 */
    uint32_t peak_gen; /* bumped each time the per-context values at the peak are wanted */
    uint64_t slack;
    uint32_t next_id __attribute__((aligned(64)));
    uint32_t ncontexts; /* contexts in the depot (ids may have holes) */
    int64_t live_size __attribute__((aligned(64)));
    int64_t live_count;
    uint64_t peak_size __attribute__((aligned(64)));
    uint64_t peak_count, peak_ms, peak_snap_size;
    uint64_t peak_dump_at; /* dump_peak_growth: the peak that asks for the next .peak dump; 0: off */
    int peak_pending;
    uint64_t total_allocs __attribute__((aligned(64)));
    uint64_t total_frees, total_bytes;
};
extern struct hp_prof hp_prof;

/* Mark context id with flag (HPF_LIVE_*, written in its LIVE record): the pool API marks the
 * contexts of the objects it reports. One load once the flag is set. */
static inline void hp_profile_ctx_flag(uint32_t id, uint32_t flag)
{
    if (id >= hp_prof.max_id)
        return;
    struct hp_ctx *c = __atomic_load_n(&hp_prof.by_id[id], __ATOMIC_ACQUIRE);
    if (c && !(__atomic_load_n(&c->flags, __ATOMIC_RELAXED) & flag))
        __atomic_fetch_or(&c->flags, flag, __ATOMIC_RELAXED);
}

/* Flush every thread's cache, all taken at one moment, into the shared table and context
 * counters (dump). Other threads' moves out of their caches wait from here until
 * hp_profile_hold(0): a dump calls hp_profile_hold(1) right after it. */
void hp_profile_flush_all(void);
/* While a dump writes (on: after hp_profile_flush_all, off: when it is written), other threads
 * keep their changes in their caches instead of pushing them to the contexts and totals, so
 * that what the dump reads is the state at the flush, not a mix of moments. */
void hp_profile_hold(int on);
/* Call fn for every HIB in the shared table. */
void hp_table_foreach(void (*fn)(const struct hpf_hib *, void *), void *arg);
/* The calling thread's cache sizes: context entries and stack-cache sets (0, 0 without one). */
void hp_profile_thread_tables(uint64_t *entries, uint64_t *sets);
/* At a dump, after hp_profile_flush_all: make every context's values at the global peak final
 * (taking them now if the heap is at a new peak). */
void hp_peak_finish(void);

#endif
