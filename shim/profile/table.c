/* The shared HIB table: set-associative, one lock per set; a thread cache's HIBs merge into it
 * and the least recently used entry of a full set leaves for the profile (evict_sink). */
#include "profile/profile_internal.h"

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

/* Where HIBs evicted from the table go (hp_table_map). */
static void (*evict_sink)(const struct hpf_hib *);

/* The slot of context ctx_id in its set, taken (or made, the set's least recently used entry
 * evicted) with the set's lock held: the caller adds to its HIB and calls slot_done. */
static struct slot *slot_take(uint32_t ctx_id, struct set **sp)
{
    uint64_t si = set_of(ctx_id);
    struct set *s = &sets[si];
    struct slot *row = &slots[si * ways];
    *sp = s;
    hp_lock(&s->lock);
    s->clock++;
    struct slot *victim = NULL;
    for (uint64_t w = 0; w < ways; w++) {
        struct slot *sl = &row[w];
        if (sl->ctx_id == ctx_id) {
            sl->last_use = s->clock;
            return sl;
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
    return victim;
}

/* Merge a thread's running HIB of context ctx_id into the table, with the access figures of
 * those of its blocks that have them (the others count as blocks of no accesses). */
void hp_table_merge(uint32_t ctx_id, const struct hp_hib_run *run, const struct acc_run *ar)
{
    if (run->alloc_count == 0)
        return;
    struct hpf_hib hib;
    hp_hib_run_to(run, &hib);
    hib.context_id = ctx_id;
    if (ar && ar->n) {
        int all = ar->n >= run->alloc_count;
        hib.total_access_count = ar->tot_a;
        hib.min_access_count = all ? ar->min_a : 0;
        hib.max_access_count = ar->max_a;
        hib.total_write_count = ar->tot_w;
        hib.min_write_count = all ? ar->min_w : 0;
        hib.max_write_count = ar->max_w;
        hib.total_percent_utilized = ar->tot_u;
        hib.min_percent_utilized = all ? ar->min_u : 0;
        hib.max_percent_utilized = ar->max_u;
        hp_hist_add_bins(ctx_id, ar->hist, ar->bins, HP_ACC_BINS);
    }
    struct set *s;
    struct slot *sl = slot_take(ctx_id, &s);
    hp_hib_merge(&sl->hib, &hib);
    hp_unlock(&s->lock);
}

/* Add one freed block (with its access figures) to context ctx_id's HIB in the table. */
void hp_table_add(uint32_t ctx_id, const struct hp_block_event *e)
{
    struct set *s;
    struct slot *sl = slot_take(ctx_id, &s);
    hp_hib_add(&sl->hib, e);
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

uint64_t hp_table_bytes(uint64_t hib_size, uint64_t nways)
{
    uint64_t ns = hp_round_pow2(hib_size / nways);
    return hp_pages(ns * sizeof(struct set)) + hp_pages(ns * nways * sizeof(struct slot));
}

int hp_table_map(void (*evict)(const struct hpf_hib *))
{
    evict_sink = evict;
    ways = hp_opt.hib_table_ways;
    nsets = hp_round_pow2(hp_opt.hib_table_size / ways);
    sets = hp_meta_map(nsets * sizeof *sets);
    slots = hp_meta_map(nsets * ways * sizeof *slots);
    return sets && slots;
}

/* The sets hp_table_fork_prepare locked: those the context ids so far map to (set_of). The
 * others were never touched, and no context is made until the fork is over (every thread's
 * cache is taken, the dump lock held). Locking all of them (8,192 by default, 32 pages) would
 * make every fork copy their pages twice, in the parent and in the child, and fault them all
 * in at the first (bench/forks.sh). */
static uint64_t fork_sets;

void hp_table_fork_prepare(void)
{
    uint64_t used = __atomic_load_n(&hp_prof.next_id, __ATOMIC_ACQUIRE) / ways + 1;
    fork_sets = used < nsets ? used : nsets;
    for (uint64_t i = 0; i < fork_sets; i++)
        hp_lock(&sets[i].lock);
}

void hp_table_fork_parent(void)
{
    for (uint64_t i = fork_sets; i-- > 0;)
        hp_unlock(&sets[i].lock);
}

void hp_table_fork_child(void)
{
    for (uint64_t i = 0; i < fork_sets; i++)
        hp_lock_reset(&sets[i].lock);
}
