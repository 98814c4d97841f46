/* Per-context access state of access profiling: the histogram the shadow adds a freed block's
 * accesses to, and room for what a dump folds in of the live blocks. Made on first use. */
#include "profile/profile_internal.h"

uint32_t hp_hist_bins;
uint32_t hp_word_bins;
int hp_word_hists_on;

struct hp_ctx_access *hp_ctx_access(uint32_t ctx, int may_wait)
{
    if (ctx == 0 || ctx >= hp_prof.max_id)
        return NULL;
    struct hp_ctx *c = __atomic_load_n(&hp_prof.by_id[ctx], __ATOMIC_ACQUIRE);
    if (!c)
        return NULL;
    struct hp_ctx_access *a = __atomic_load_n(&c->access, __ATOMIC_ACQUIRE);
    if (HP_LIKELY(a != NULL))
        return a;
    uint32_t words = __atomic_load_n(&hp_word_hists_on, __ATOMIC_ACQUIRE) ? hp_word_bins : 0;
    size_t size = sizeof *a + (2 * (size_t)hp_hist_bins + 4 * (size_t)words) * sizeof a->hist[0];
    /* A free inside the shim's own work or a signal handler that interrupted it (the arena's
     * lock may be this thread's): the arena's variant that gives up instead of waiting. */
    struct hp_ctx_access *fresh = may_wait || !hp_tls.depth ? hp_meta_alloc(size)
                                                            : hp_meta_alloc_nested(size);
    if (!fresh)
        return NULL;
    fresh->word_bins = words; /* the arena's memory is zeroed: the rest is 0 already */
    /* Two threads racing leave the loser's block unused: once per context at most. */
    if (!__atomic_compare_exchange_n(&c->access, &a, fresh, 0, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE))
        return a;
    return fresh;
}

uint64_t *hp_ctx_hist(uint32_t ctx)
{
    struct hp_ctx_access *a = hp_ctx_access(ctx, 0);
    return a ? a->hist : NULL;
}

void hp_hist_add_bins(uint32_t ctx, uint64_t *hist, const uint64_t *bins, uint32_t n)
{
    if (!hist)
        hist = hp_ctx_hist(ctx);
    if (!hist)
        return; /* no memory for the context's histogram: it has none */
    for (uint32_t i = 0; i < n && i < hp_hist_bins; i++)
        if (bins[i])
            __atomic_fetch_add(&hist[i], bins[i], __ATOMIC_RELAXED);
}

uint64_t *hp_profile_hist(uint32_t ctx, uint64_t granules)
{
    if (granules == 0 || granules > hp_hist_bins)
        return NULL;
    return hp_profile_hists(ctx);
}

uint64_t *hp_profile_hists(uint32_t ctx)
{
    /* The thread's entry for the context keeps the pointer once looked up: the context and its
     * access state are seldom in the cache, the entry is about to be used by the free. Not
     * from a signal handler inside the shim, whose thread may be changing its entries. */
    struct hp_thread *t = hp_tls.thread;
    struct acc_run *ar = NULL;
    if (t && t->acc && !hp_tls.depth) {
        uint64_t i = hp_entry_slot(ctx, t->tmask);
        if (t->entries[i].ctx_id == ctx) {
            ar = &t->acc[i];
            if (HP_LIKELY(ar->hist != NULL))
                return ar->hist;
        }
    }
    uint64_t *hist = hp_ctx_hist(ctx);
    if (ar)
        ar->hist = hist;
    return hist;
}
