/* The parts of a merged profile other than its modules and stacks: process, summary, access
 * record and each context's figures, by the rules of docs/REPORT.md ("Merging profiles"). */
#include <stdlib.h>
#include <string.h>

#include "merge_internal.h"

struct hr_str hr_pool_put(char **pool, const char *s, uint32_t n)
{
    struct hr_str r = {*pool, n};
    if (n)
        memcpy(*pool, s, n);
    *pool += n;
    return r;
}

size_t hr_merge_pool_size(const struct hr_merger *m, int group)
{
    size_t n = 0;
    for (size_t i = 0; i < m->n; i++) {
        const struct hr_profile *p = m->in[i].p;
        if (m->in[i].group != group || !m->in[i].used)
            continue;
        n += p->backend.len + p->executable.len + p->allocator.len;
        for (uint32_t a = 0; a < p->process.argc; a++)
            n += p->argv[a].len;
        for (uint32_t a = 0; p->access.present && a < p->access.rec.nmodules; a++)
            n += p->access.modules[a].path.len;
    }
    for (size_t k = 0; k < m->nmods; k++) /* every group's out holds every module */
        n += m->mods[k].first->path.len + m->mods[k].first->build_id_len;
    return n;
}

static void hr_summary_add(struct hpf_summary *d, const struct hpf_summary *s)
{
    /* The process whose own peak is the largest lends its peak time. */
    if (s->peak_live_size > d->peak_live_size ||
        (s->peak_live_size == d->peak_live_size && !d->peak_ms))
        d->peak_ms = s->peak_ms;
    d->total_allocs += s->total_allocs;
    d->total_frees += s->total_frees;
    d->total_bytes += s->total_bytes;
    d->live_count += s->live_count;
    d->live_size += s->live_size;
    d->peak_live_size += s->peak_live_size;
    d->peak_live_count += s->peak_live_count;
    d->peak_slack_bytes += s->peak_slack_bytes;
    d->contexts += s->contexts;
    d->unprofiled_allocs += s->unprofiled_allocs;
    d->evicted_hibs += s->evicted_hibs;
    d->foreign_frees += s->foreign_frees;
    d->double_frees += s->double_frees;
    d->bootstrap_bytes += s->bootstrap_bytes;
    d->metadata_bytes += s->metadata_bytes;
    d->metadata_budget += s->metadata_budget;
    d->truncated_stacks += s->truncated_stacks;
    if (!d->killed_by)
        d->killed_by = s->killed_by;
    d->metadata_resident += s->metadata_resident;
    d->shadow_resident += s->shadow_resident;
    d->shadow_registry_bytes += s->shadow_registry_bytes;
    d->pool_unknown_frees += s->pool_unknown_frees;
    d->pool_dropped += s->pool_dropped;
    if (s->headerless) /* any process profiled without headers */
        d->headerless = 1;
    d->headerless_unseen_frees += s->headerless_unseen_frees;
}

/* The process record, strings and argv of the group's first-started process. */
static int hr_take_process(struct hr_profile *out, const struct hr_profile *p, char **pool)
{
    out->process = p->process;
    out->backend = hr_pool_put(pool, p->backend.ptr, p->backend.len);
    out->executable = hr_pool_put(pool, p->executable.ptr, p->executable.len);
    out->allocator = hr_pool_put(pool, p->allocator.ptr, p->allocator.len);
    out->argv = calloc(p->process.argc ? p->process.argc : 1, sizeof *out->argv);
    if (!out->argv)
        return -1;
    for (uint32_t a = 0; a < p->process.argc; a++)
        out->argv[a] = hr_pool_put(pool, p->argv[a].ptr, p->argv[a].len);
    return 0;
}

/* Access: present if any input has it; modes or'ed; modules listed once by merged address. */
static int hr_access_add(const struct hr_merger *m, size_t i, struct hr_profile *out, char **pool)
{
    const struct hr_access *a = &m->in[i].p->access;
    struct hr_access *d = &out->access;
    if (!a->present)
        return 0;
    if (!d->present) {
        *d = (struct hr_access){.present = 1, .rec = a->rec};
        d->rec.nmodules = 0;
    }
    d->rec.modes |= a->rec.modes;
    if (a->rec.hist_bins > d->rec.hist_bins)
        d->rec.hist_bins = a->rec.hist_bins;
    struct hr_access_module *v =
        realloc(d->modules, (d->rec.nmodules + a->rec.nmodules + 1) * sizeof *v);
    if (!v)
        return -1;
    d->modules = v;
    for (uint32_t k = 0; k < a->rec.nmodules; k++) {
        uint64_t addr = hr_merge_addr(m, i, a->modules[k].addr);
        uint32_t j = 0;
        while (j < d->rec.nmodules && d->modules[j].addr != addr)
            j++;
        if (j < d->rec.nmodules)
            continue;
        d->modules[j] = a->modules[k];
        d->modules[j].addr = addr;
        d->modules[j].path = hr_pool_put(pool, a->modules[k].path.ptr, a->modules[k].path.len);
        d->rec.nmodules++;
    }
    return 0;
}

int hr_merge_process(const struct hr_merger *m, int group, struct hr_profile *out)
{
    char *pool = (char *)out->data;
    const struct hr_profile *first = NULL;
    size_t used = 0;
    for (size_t i = 0; i < m->n; i++) {
        const struct hr_profile *p = m->in[i].p;
        if (m->in[i].group != group || !m->in[i].used)
            continue;
        used++;
        if (!first || p->process.start_unix_ns < first->process.start_unix_ns)
            first = p;
        hr_summary_add(&out->summary, &p->summary);
        if (p->version > out->version)
            out->version = p->version;
        out->records += p->records;
        if (p->cut.cut) { /* the profiles cut short among those used */
            out->cut.cut = 1;
            out->cut.files += p->cut.files;
            out->cut.dropped_contexts += p->cut.dropped_contexts;
            out->cut.summary_rebuilt |= p->cut.summary_rebuilt;
        }
        out->unknown_records += p->unknown_records;
        if (hr_access_add(m, i, out, &pool))
            return -1;
    }
    if (first && hr_take_process(out, first, &pool))
        return -1;
    if (used > 1) /* the distinct stacks of all of them, not the sum of their depots */
        out->summary.contexts = out->ncontexts;
    return hr_merge_write_modules(m, out, &pool);
}

static int hr_hist_add(struct hr_context *d, const struct hr_context *s)
{
    if (!s->hist_bins)
        return 0;
    if (s->hist_bins > d->hist_bins) {
        uint64_t *v = realloc(d->hist, s->hist_bins * sizeof *v);
        if (!v)
            return -1;
        memset(v + d->hist_bins, 0, (s->hist_bins - d->hist_bins) * sizeof *v);
        d->hist = v;
        d->hist_bins = s->hist_bins;
    }
    for (uint32_t b = 0; b < s->hist_bins; b++)
        d->hist[b] += s->hist[b];
    return 0;
}

static void hr_live_add(struct hpf_live *d, const struct hpf_live *s)
{
    /* first/last are each process's own clock (ms since its start): the earliest and latest. */
    if (s->allocs && (!d->allocs || s->first_alloc_ms < d->first_alloc_ms))
        d->first_alloc_ms = s->first_alloc_ms;
    if (s->last_alloc_ms > d->last_alloc_ms)
        d->last_alloc_ms = s->last_alloc_ms;
    d->allocs += s->allocs;
    d->bytes += s->bytes;
    d->live_count += s->live_count;
    d->live_size += s->live_size;
    d->max_live_count += s->max_live_count;
    d->max_live_size += s->max_live_size;
    d->peak_live_count += s->peak_live_count;
    d->peak_live_size += s->peak_live_size;
}

int hr_merge_context_figures(struct hr_context *d, const struct hr_context *s)
{
    if (s->has_hib) {
        if (d->has_hib) {
            hr_hib_merge(&d->hib, &s->hib);
        } else {
            d->hib = s->hib;
            d->hib.context_id = d->context_id;
        }
        d->has_hib = 1;
    }
    if (s->has_live) {
        hr_live_add(&d->live, &s->live);
        d->has_live = 1;
    }
    return hr_hist_add(d, s);
}
