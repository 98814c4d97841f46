/* The address space of a merged profile: one module per file however many inputs mapped it,
 * each at a load bias where it overlaps no other module and no frame that is in no module, and
 * the mapping of every input's pcs into that space. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hr_arrays.h"
#include "merge_internal.h"

/* Modules are the same file when their build ids agree; without a build id on both sides, when
 * their paths agree. A record with neither cannot be matched: its frames keep their pcs. */
static int hr_same_module(const struct hr_module *a, const struct hr_module *b)
{
    if (a->build_id_len && b->build_id_len)
        return a->build_id_len == b->build_id_len &&
               memcmp(a->build_id, b->build_id, a->build_id_len) == 0;
    return a->path.len == b->path.len && memcmp(a->path.ptr, b->path.ptr, a->path.len) == 0;
}

static long hr_mmod_get(struct hr_merger *m, const struct hr_module *rec)
{
    if (!rec->build_id_len && !rec->path.len)
        return -1;
    for (size_t i = 0; i < m->nmods; i++)
        if (hr_same_module(m->mods[i].first, rec))
            return (long)i;
    if (hr_grow(&m->mods, &m->capmods, m->nmods, sizeof *m->mods, 32))
        return -2;
    memset(&m->mods[m->nmods], 0, sizeof m->mods[0]);
    m->mods[m->nmods].first = rec;
    m->mods[m->nmods].bias = rec->load_bias;
    return (long)m->nmods++;
}

static int hr_mmod_add_seg(struct hr_mmod *d, const struct hpf_segment *s, uint64_t bias)
{
    if (hr_grow(&d->rel, &d->caprel, d->nrel, sizeof *d->rel, 4))
        return -1;
    struct hpf_segment r = *s;
    r.start -= bias;
    r.end -= bias;
    d->rel[d->nrel++] = r;
    return 0;
}

static int hr_seg_cmp(const void *a, const void *b)
{
    const struct hpf_segment *x = a, *y = b;
    return x->start < y->start ? -1 : x->start > y->start;
}

/* Sorted and made disjoint: the symbolizer's lookup assumes segments do not overlap. */
static void hr_mmod_normalise(struct hr_mmod *d)
{
    if (!d->nrel)
        return;
    qsort(d->rel, d->nrel, sizeof *d->rel, hr_seg_cmp);
    uint32_t k = 0;
    for (uint32_t i = 0; i < d->nrel; i++) {
        if (k && d->rel[i].start <= d->rel[k - 1].end) {
            if (d->rel[i].end > d->rel[k - 1].end)
                d->rel[k - 1].end = d->rel[i].end;
        } else {
            d->rel[k++] = d->rel[i];
        }
    }
    d->nrel = k;
}

static int hr_input_modules(struct hr_merger *m, struct hr_minput *in)
{
    const struct hr_profile *p = in->p;
    size_t nseg = 0;
    for (size_t j = 0; j < p->nmodules; j++)
        nseg += p->modules[j].nsegs;
    in->ranges = malloc((nseg ? nseg : 1) * sizeof *in->ranges);
    if (!in->ranges)
        return -1;
    for (size_t j = 0; j < p->nmodules; j++) {
        const struct hr_module *rec = &p->modules[j];
        long k = hr_mmod_get(m, rec);
        if (k == -2)
            return -1;
        if (k < 0)
            continue;
        for (uint32_t s = 0; s < rec->nsegs; s++) {
            if (hr_mmod_add_seg(&m->mods[k], &rec->segs[s], rec->load_bias))
                return -1;
            in->ranges[in->nranges++] = (struct hr_srange){rec->segs[s].start, rec->segs[s].end,
                                                           rec->load_bias, (uint32_t)k};
        }
    }
    qsort(in->ranges, in->nranges, sizeof *in->ranges, hr_start_cmp);
    return 0;
}

static const struct hr_srange *hr_range_find(const struct hr_minput *in, uint64_t addr)
{
    size_t lo = hr_first_above(in->ranges, in->nranges, sizeof *in->ranges, addr);
    if (lo == 0 || addr >= in->ranges[lo - 1].end)
        return NULL;
    return &in->ranges[lo - 1];
}

uint64_t hr_merge_addr(const struct hr_merger *m, size_t i, uint64_t addr)
{
    const struct hr_srange *r = hr_range_find(&m->in[i], addr);
    return r ? addr - r->bias + m->mods[r->mmod].bias : addr;
}

uint64_t hr_merge_pc(const struct hr_merger *m, size_t i, uint64_t pc)
{
    /* As the symbolizer does: a return address belongs where pc - 1 is. */
    return pc ? hr_merge_addr(m, i, pc - 1) + 1 : 0;
}

static int hr_u64_cmp(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

/* pc - 1 of every frame in no module, and the highest address any input uses. */
static int hr_collect_raw(struct hr_merger *m, uint64_t *top)
{
    for (size_t i = 0; i < m->n; i++) {
        const struct hr_minput *in = &m->in[i];
        if (!in->used)
            continue;
        for (size_t r = 0; r < in->nranges; r++)
            if (in->ranges[r].end > *top)
                *top = in->ranges[r].end;
        for (size_t c = 0; c < in->p->ncontexts; c++) {
            const struct hr_context *ctx = &in->p->contexts[c];
            for (uint32_t d = 0; d < ctx->depth; d++) {
                uint64_t pc = ctx->pcs[d];
                if (!pc || hr_range_find(in, pc - 1))
                    continue;
                if (hr_grow(&m->raw, &m->capraw, m->nraw, sizeof *m->raw, 256))
                    return -1;
                m->raw[m->nraw++] = pc - 1;
                if (pc > *top)
                    *top = pc;
            }
        }
    }
    if (m->nraw) /* qsort's base must not be NULL */
        qsort(m->raw, m->nraw, sizeof *m->raw, hr_u64_cmp);
    return 0;
}

/* Whether [start, end) holds a frame in no module. */
static int hr_raw_within(const struct hr_merger *m, uint64_t start, uint64_t end)
{
    size_t lo = 0, hi = m->nraw;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (m->raw[mid] < start)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo < m->nraw && m->raw[lo] < end;
}

/* Whether module k at its bias overlaps a module placed before it or a frame in no module. */
static int hr_conflicts(const struct hr_merger *m, size_t k)
{
    const struct hr_mmod *d = &m->mods[k];
    for (uint32_t s = 0; s < d->nrel; s++) {
        uint64_t a = d->rel[s].start + d->bias, b = d->rel[s].end + d->bias;
        if (b < a || hr_raw_within(m, a, b))
            return 1;
        for (size_t j = 0; j < k; j++) {
            const struct hr_mmod *o = &m->mods[j];
            for (uint32_t t = 0; t < o->nrel; t++)
                if (a < o->rel[t].end + o->bias && o->rel[t].start + o->bias < b)
                    return 1;
        }
    }
    return 0;
}

#define HR_PLACE_ALIGN ((uint64_t)2 << 20)

int hr_merge_modules(struct hr_merger *m, char err[HR_ERR_MAX])
{
    for (size_t i = 0; i < m->n; i++)
        if (m->in[i].used && hr_input_modules(m, &m->in[i]))
            goto oom;
    uint64_t top = 0;
    if (hr_collect_raw(m, &top))
        goto oom;
    /* Each module keeps the bias of its first record where that is free (so one profile
     * merged alone keeps its addresses); the others go above everything, 2 MiB apart. */
    for (size_t k = 0; k < m->nmods; k++) {
        struct hr_mmod *d = &m->mods[k];
        hr_mmod_normalise(d);
        if (!hr_conflicts(m, k))
            continue;
        int64_t lo = 0, hi = 0;
        for (uint32_t s = 0; s < d->nrel; s++) {
            if ((int64_t)d->rel[s].start < lo)
                lo = (int64_t)d->rel[s].start;
            if ((int64_t)d->rel[s].end > hi)
                hi = (int64_t)d->rel[s].end;
        }
        uint64_t bias = ((top - (uint64_t)lo) + HR_PLACE_ALIGN - 1) & ~(HR_PLACE_ALIGN - 1);
        if (bias < top || bias + (uint64_t)hi < bias) {
            snprintf(err, HR_ERR_MAX, "the profiles' modules do not fit one address space");
            return -1;
        }
        d->bias = bias;
        top = bias + (uint64_t)hi;
    }
    return 0;
oom:
    snprintf(err, HR_ERR_MAX, "out of memory");
    return -1;
}

int hr_merge_write_modules(const struct hr_merger *m, struct hr_profile *out, char **pool)
{
    out->modules = calloc(m->nmods ? m->nmods : 1, sizeof *out->modules);
    if (!out->modules)
        return -1;
    for (size_t k = 0; k < m->nmods; k++) {
        const struct hr_mmod *d = &m->mods[k];
        struct hr_module *o = &out->modules[k];
        o->segs = malloc((d->nrel ? d->nrel : 1) * sizeof *o->segs);
        if (!o->segs)
            return -1;
        out->nmodules++;
        o->load_bias = d->bias;
        o->nsegs = d->nrel;
        for (uint32_t s = 0; s < d->nrel; s++) {
            o->segs[s] = d->rel[s];
            o->segs[s].start += d->bias;
            o->segs[s].end += d->bias;
        }
        struct hr_str id = hr_pool_put(pool, (const char *)d->first->build_id,
                                       d->first->build_id_len);
        o->build_id = (const uint8_t *)id.ptr;
        o->build_id_len = d->first->build_id_len;
        o->path = hr_pool_put(pool, d->first->path.ptr, d->first->path.len);
    }
    return 0;
}

void hr_merge_modules_free(struct hr_merger *m)
{
    for (size_t k = 0; k < m->nmods; k++)
        free(m->mods[k].rel);
    free(m->mods);
    for (size_t i = 0; i < m->n; i++)
        free(m->in[i].ranges);
    free(m->raw);
}
