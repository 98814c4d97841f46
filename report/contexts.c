/* The table of allocation contexts of one profile: an array in first-seen order plus an
 * open-addressing index by context_id, since STACK/HIB/LIVE records may come in any order. */
#include <stdlib.h>
#include <string.h>

#include "hr_arrays.h"
#include "hr_profile.h"

static size_t hr_slot(uint32_t id, size_t cap)
{
    return (size_t)(id * 2654435761u) & (cap - 1); /* Knuth's multiplicative hash */
}

static int hr_index_grow(struct hr_profile *p)
{
    size_t cap = p->index_cap ? p->index_cap * 2 : 64;
    uint32_t *idx = calloc(cap, sizeof *idx);
    if (!idx)
        return -1;
    for (size_t i = 0; i < p->ncontexts; i++) {
        size_t s = hr_slot(p->contexts[i].context_id, cap);
        while (idx[s])
            s = (s + 1) & (cap - 1);
        idx[s] = (uint32_t)(i + 1);
    }
    free(p->index);
    p->index = idx;
    p->index_cap = cap;
    return 0;
}

struct hr_context *hr_context_find(const struct hr_profile *p, uint32_t context_id)
{
    if (!p->index_cap)
        return NULL;
    for (size_t s = hr_slot(context_id, p->index_cap); p->index[s];
         s = (s + 1) & (p->index_cap - 1)) {
        struct hr_context *c = &p->contexts[p->index[s] - 1];
        if (c->context_id == context_id)
            return c;
    }
    return NULL;
}

struct hr_context *hr_context_get(struct hr_profile *p, uint32_t context_id)
{
    struct hr_context *c = hr_context_find(p, context_id);
    if (c)
        return c;
    /* Keep the index at most half full so probes stay short. */
    if ((p->ncontexts + 1) * 2 > p->index_cap && hr_index_grow(p))
        return NULL;
    if (p->ncontexts >= UINT32_MAX - 1)
        return NULL;
    if (hr_grow(&p->contexts, &p->contexts_cap, p->ncontexts, sizeof *p->contexts, 64))
        return NULL;
    c = &p->contexts[p->ncontexts];
    memset(c, 0, sizeof *c);
    c->context_id = context_id;
    c->hib.context_id = context_id;
    c->live.context_id = context_id;
    size_t s = hr_slot(context_id, p->index_cap);
    while (p->index[s])
        s = (s + 1) & (p->index_cap - 1);
    p->index[s] = (uint32_t)(++p->ncontexts);
    return c;
}

size_t hr_contexts_prune(struct hr_profile *p, int (*keep)(const struct hr_context *c))
{
    size_t k = 0;
    for (size_t i = 0; i < p->ncontexts; i++) {
        struct hr_context *c = &p->contexts[i];
        if (keep(c)) {
            p->contexts[k++] = *c;
            continue;
        }
        free(c->pcs);
        free(c->hist);
        free(c->word_hist);
        free(c->word_sat);
    }
    size_t gone = p->ncontexts - k;
    p->ncontexts = k;
    /* The index keeps its size (fewer entries never need more room): refilled in place. */
    if (p->index_cap)
        memset(p->index, 0, p->index_cap * sizeof *p->index);
    for (size_t i = 0; i < k; i++) {
        size_t s = hr_slot(p->contexts[i].context_id, p->index_cap);
        while (p->index[s])
            s = (s + 1) & (p->index_cap - 1);
        p->index[s] = (uint32_t)(i + 1);
    }
    return gone;
}
