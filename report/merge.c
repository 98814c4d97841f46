/* Merging profiles: which inputs count (the latest dump of each process), one context per
 * distinct stack in a shared address space (merge_modules.c), figures added (merge_fields.c). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hr_arrays.h"
#include "hr_merge.h"
#include "merge_internal.h"

/* Dumps of one process share its pid and its start time (an exec'd image starts afresh). */
static int hr_same_process(const struct hr_profile *a, const struct hr_profile *b)
{
    return a->process.pid == b->process.pid &&
           a->process.start_unix_ns == b->process.start_unix_ns;
}

/* The exit profile (or the one written as a signal ended the process) is the process's last. */
static int hr_final(const struct hr_profile *p)
{
    return p->process.dump_reason == HPF_DUMP_EXIT || p->process.dump_reason == HPF_DUMP_KILLED;
}

/* Whether dump b supersedes dump a of the same process: a complete one supersedes one cut
 * short (which lacks what the cut took); then the later: a final one after any other, then
 * by the monotonic clock (ms), the wall clock (ns: dumps within one ms), dump_seq, and on a
 * tie the later argument. */
static int hr_later(const struct hr_profile *a, size_t ia, const struct hr_profile *b, size_t ib)
{
    const struct hpf_process *x = &a->process, *y = &b->process;
    if (a->cut.cut != b->cut.cut)
        return a->cut.cut;
    if (hr_final(a) != hr_final(b))
        return hr_final(b);
    if (y->dump_ms != x->dump_ms)
        return y->dump_ms > x->dump_ms;
    if (y->dump_unix_ns != x->dump_unix_ns)
        return y->dump_unix_ns > x->dump_unix_ns;
    if (y->dump_seq != x->dump_seq)
        return y->dump_seq > x->dump_seq;
    return ib > ia;
}

/* Index of the dump that supersedes input i (i itself when none does). */
static size_t hr_latest(const struct hr_merger *m, size_t i)
{
    size_t best = i;
    for (size_t j = 0; j < m->n; j++)
        if (m->in[j].group == m->in[i].group && hr_same_process(m->in[j].p, m->in[i].p) &&
            hr_later(m->in[best].p, best, m->in[j].p, j))
            best = j;
    return best;
}

static uint64_t hr_stack_hash(const uint64_t *pcs, uint32_t depth)
{
    uint64_t h = 0x243f6a8885a308d3u ^ depth;
    for (uint32_t i = 0; i < depth; i++) {
        h = (h ^ pcs[i]) * 0x9e3779b97f4a7c15u;
        h ^= h >> 29;
    }
    return h;
}

static int hr_keys_grow(struct hr_merger *m)
{
    size_t cap = m->capslots ? m->capslots * 2 : 1024;
    uint32_t *slots = calloc(cap, sizeof *slots);
    if (!slots)
        return -1;
    for (size_t k = 0; k < m->nkeys; k++) {
        if (!m->keys[k].pcs)
            continue; /* a stackless context's id: never matched */
        size_t s = m->keys[k].hash & (cap - 1);
        while (slots[s])
            s = (s + 1) & (cap - 1);
        slots[s] = (uint32_t)(k + 1);
    }
    free(m->slots);
    m->slots = slots;
    m->capslots = cap;
    return 0;
}

/* The merged id of a stack (new when unseen; pcs then become the key's). Stackless contexts
 * (pcs NULL) always get a new id. Returns 0 when out of memory, else the id; *fresh says the
 * key was made now. */
static uint32_t hr_stack_id(struct hr_merger *m, uint64_t *pcs, uint32_t depth, int has_stack,
                            int *fresh)
{
    if ((m->nkeys + 1) * 2 > m->capslots && hr_keys_grow(m))
        return 0;
    uint64_t h = has_stack ? hr_stack_hash(pcs, depth) : 1;
    size_t s = h & (m->capslots - 1);
    *fresh = 0;
    for (; has_stack && m->slots[s]; s = (s + 1) & (m->capslots - 1)) {
        const struct hr_skey *k = &m->keys[m->slots[s] - 1];
        if (k->hash == h && k->depth == depth && k->pcs &&
            (depth == 0 || memcmp(k->pcs, pcs, depth * sizeof *pcs) == 0))
            return m->slots[s];
    }
    if (m->nkeys >= UINT32_MAX - 1)
        return 0;
    if (hr_grow(&m->keys, &m->capkeys, m->nkeys, sizeof *m->keys, 1024))
        return 0;
    /* An empty stack still needs a non-NULL key to be told from a stackless context. */
    static const uint64_t hr_empty_stack[1];
    m->keys[m->nkeys] = (struct hr_skey){h, has_stack ? (pcs ? pcs : hr_empty_stack) : NULL,
                                         has_stack ? depth : 0};
    if (has_stack)
        m->slots[s] = (uint32_t)(m->nkeys + 1);
    *fresh = 1;
    return (uint32_t)++m->nkeys;
}

static int hr_merge_one_context(struct hr_merger *m, size_t i, const struct hr_context *c,
                                struct hr_profile *out)
{
    uint64_t *pcs = NULL;
    if (c->depth) {
        pcs = malloc(c->depth * sizeof *pcs);
        if (!pcs)
            return -1;
        for (uint32_t d = 0; d < c->depth; d++)
            pcs[d] = hr_merge_pc(m, i, c->pcs[d]);
    }
    int fresh;
    uint32_t id = hr_stack_id(m, pcs, c->depth, c->has_stack, &fresh);
    struct hr_context *d = id ? hr_context_get(out, id) : NULL;
    if (!d) {
        if (!fresh)
            free(pcs);
        return -1;
    }
    if (!d->has_stack && !d->has_hib && !d->has_live && !d->pcs) { /* new in this group */
        d->has_stack = c->has_stack;
        d->depth = c->depth;
        d->pcs = pcs;
    } else {
        free(pcs);
    }
    if (fresh && pcs && d->pcs != pcs)
        m->keys[id - 1].pcs = d->pcs;
    return hr_merge_context_figures(d, c);
}

int hr_merge_run(struct hr_merger *m, char err[HR_ERR_MAX])
{
    for (size_t i = 0; i < m->n; i++)
        m->in[i].used = hr_latest(m, i) == i;
    return hr_merge_modules(m, err);
}

/* out->sources: the group's inputs in order, each superseded one naming its replacement. */
static int hr_merge_sources(const struct hr_merger *m, int group, struct hr_profile *out)
{
    size_t n = 0;
    for (size_t i = 0; i < m->n; i++)
        n += m->in[i].group == group;
    out->sources = calloc(n ? n : 1, sizeof *out->sources);
    if (!out->sources)
        return -1;
    for (size_t i = 0, k = 0; i < m->n; i++) {
        if (m->in[i].group != group)
            continue;
        struct hr_source *s = &out->sources[k++];
        out->nsources = k;
        s->path = strdup(m->in[i].p->path ? m->in[i].p->path : "");
        if (!s->path)
            return -1;
        s->process = m->in[i].p->process;
        s->cut = m->in[i].p->cut.cut;
        s->cut_size = m->in[i].p->cut.size;
        s->used = m->in[i].used;
        size_t latest = hr_latest(m, i), pos = 0;
        for (size_t j = 0; j < latest; j++)
            pos += m->in[j].group == group;
        s->superseded_by = s->used ? -1 : (int)pos;
    }
    const char *p0 = n ? out->sources[0].path : "";
    size_t len = strlen(p0) + 48;
    out->path = malloc(len);
    if (!out->path)
        return -1;
    if (n > 1)
        snprintf(out->path, len, "%s (+%zu more profile%s)", p0, n - 1, n == 2 ? "" : "s");
    else
        snprintf(out->path, len, "%s", p0);
    return 0;
}

int hr_merge_group(struct hr_merger *m, int group, struct hr_profile *out, char err[HR_ERR_MAX])
{
    for (size_t i = 0; i < m->n; i++) {
        if (m->in[i].group != group || !m->in[i].used)
            continue;
        const struct hr_profile *p = m->in[i].p;
        for (size_t c = 0; c < p->ncontexts; c++)
            if (hr_merge_one_context(m, i, &p->contexts[c], out))
                goto oom;
    }
    out->size = hr_merge_pool_size(m, group);
    out->data = malloc(out->size ? out->size : 1);
    if (!out->data || hr_merge_process(m, group, out) || hr_merge_sources(m, group, out))
        goto oom;
    return 0;
oom:
    snprintf(err, HR_ERR_MAX, "out of memory");
    return -1;
}

void hr_merger_free(struct hr_merger *m)
{
    hr_merge_modules_free(m);
    free(m->keys);
    free(m->slots);
    free(m->in);
}

int hr_profiles_merge(struct hr_profile *out, struct hr_profile *const *in, size_t n,
                      char err[HR_ERR_MAX])
{
    memset(out, 0, sizeof *out);
    struct hr_merger m = {.n = n};
    m.in = calloc(n ? n : 1, sizeof *m.in);
    if (!m.in) {
        snprintf(err, HR_ERR_MAX, "out of memory");
        return -1;
    }
    for (size_t i = 0; i < n; i++)
        m.in[i].p = in[i];
    int r = hr_merge_run(&m, err) ? -1 : hr_merge_group(&m, 0, out, err);
    hr_merger_free(&m);
    if (r)
        hr_profile_free(out);
    return r;
}
