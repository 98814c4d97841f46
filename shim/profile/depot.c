/* The stack depot: one context (struct hp_ctx) per distinct call stack, found by its hash in a
 * lock-free chained table and named by a small id (hp_prof.by_id). */
#include "profile/profile_internal.h"

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
 * there right after): store it here too (the same pointer), so every context hp_depot_get hands
 * out can be found by its id (thread cache entries keep only the id). */
static struct hp_ctx *published(struct hp_ctx *c)
{
    if (HP_UNLIKELY(!__atomic_load_n(&hp_prof.by_id[c->id], __ATOMIC_ACQUIRE)))
        __atomic_store_n(&hp_prof.by_id[c->id], c, __ATOMIC_RELEASE);
    return c;
}

/* The context of a stack, made if new. nested: for a signal handler that interrupted this
 * thread inside the shim (hp_meta_alloc_nested). */
HP_COLD struct hp_ctx *hp_depot_get(const uintptr_t *pcs, int n, uint64_t h, int nested)
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

uint64_t hp_depot_buckets(uint64_t max_contexts)
{
    return hp_round_pow2(max_contexts / 16 < 4096 ? 4096 : max_contexts / 16);
}

int hp_depot_map(void)
{
    /* One bucket per 16 possible contexts: the array (512 KiB by default) is touched all over
     * as soon as a few thousand contexts exist, so it is kept small; chains stay short until
     * the depot is far fuller than most programs get, and only threads' stack-cache misses
     * walk them. */
    uint64_t nb = hp_depot_buckets((uint64_t)hp_opt.max_contexts);
    buckets = hp_meta_map(nb * sizeof *buckets);
    hp_prof.by_id = hp_meta_map((size_t)hp_prof.max_id * sizeof *hp_prof.by_id);
    bucket_mask = nb - 1;
    return buckets && hp_prof.by_id;
}
