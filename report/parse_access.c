/* The access-profiling records of a profile: ACCESS (which instrumented modules fed the
 * shadow, in what mode, and the per-word histograms' parameters) and ACCESS_HIST (per-context
 * histograms over the blocks' granules and words, several records of one context and kind
 * added bin by bin). docs/FORMAT.md describes both. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hr_parse_internal.h"

int hr_parse_access(struct hr_profile *p, struct hr_cur *c, char *err, uint64_t off)
{
    struct hpf_access a;
    if (hr_cur_fixed(c, &a, sizeof a, "ACCESS", off, err))
        return -1;
    if (a.nmodules > c->left / sizeof(struct hpf_access_module)) {
        hr_err(err, "ACCESS record at offset %llu: %u modules do not fit in the record",
               (unsigned long long)off, a.nmodules);
        return -1;
    }
    struct hr_access_module *mods = calloc(a.nmodules ? a.nmodules : 1, sizeof *mods);
    if (!mods) {
        hr_err(err, "out of memory");
        return -1;
    }
    for (uint32_t i = 0; i < a.nmodules; i++) {
        struct hpf_access_module m;
        memcpy(&m, hr_cur_take(c, sizeof m), sizeof m);
        mods[i].addr = m.addr;
        mods[i].mode = m.mode;
    }
    /* The per-word parameters when the writer added them; bytes after those: a newer writer's,
     * ignored as PROCESS's are. */
    memset(&p->access.words, 0, sizeof p->access.words);
    if (c->left >= sizeof p->access.words)
        memcpy(&p->access.words, hr_cur_take(c, sizeof p->access.words), sizeof p->access.words);
    p->access.present = 1;
    p->access.rec = a;
    p->access.modules = mods;
    return 0;
}

/* Adds n bins to a context's histogram (*hist of *nbins), growing it to the longer of the two. */
static int hr_hist_add(uint64_t **hist, uint32_t *nbins, const uint8_t *bins, uint32_t n)
{
    if (n > *nbins) {
        uint64_t *h = realloc(*hist, (size_t)n * sizeof *h);
        if (!h)
            return -1;
        memset(h + *nbins, 0, (size_t)(n - *nbins) * sizeof *h);
        *hist = h;
        *nbins = n;
    }
    uint64_t *h = *hist;
    for (uint32_t i = 0; i < n; i++) {
        uint64_t v;
        memcpy(&v, bins + (size_t)i * 8, 8);
        /* Counters of one granule summed over blocks: wrapping would take 2^64 accesses, but
         * a damaged profile may hold anything; saturate rather than wrap. */
        h[i] = h[i] + v < v ? UINT64_MAX : h[i] + v;
    }
    return 0;
}

int hr_parse_access_hist(struct hr_profile *p, struct hr_cur *c, char *err, uint64_t off)
{
    struct hpf_access_hist h;
    if (hr_cur_fixed(c, &h, sizeof h, "ACCESS_HIST", off, err))
        return -1;
    if (c->left % 8 || c->left / 8 != h.nbins) {
        hr_err(err, "ACCESS_HIST record at offset %llu: %u bins do not match record size %llu",
               (unsigned long long)off, h.nbins, (unsigned long long)(c->left + sizeof h));
        return -1;
    }
    char where[64];
    snprintf(where, sizeof where, "ACCESS_HIST record at offset %llu", (unsigned long long)off);
    struct hr_context *ctx = hr_context_for(p, h.context_id, err, where);
    if (!ctx)
        return -1;
    uint64_t **hist;
    uint32_t *nbins;
    if (h.kind == HPF_HIST_GRANULE) {
        hist = &ctx->hist;
        nbins = &ctx->hist_bins;
    } else if (h.kind == HPF_HIST_WORD) {
        hist = &ctx->word_hist;
        nbins = &ctx->word_bins;
    } else if (h.kind == HPF_HIST_WORD_SATURATED) {
        hist = &ctx->word_sat;
        nbins = &ctx->word_sat_bins;
    } else {
        return 0; /* a kind this reader does not know */
    }
    if (hr_hist_add(hist, nbins, hr_cur_take(c, (size_t)h.nbins * 8), h.nbins)) {
        hr_err(err, "out of memory");
        return -1;
    }
    return 0;
}

void hr_access_resolve_modules(struct hr_profile *p)
{
    for (uint32_t i = 0; p->access.present && i < p->access.rec.nmodules; i++) {
        struct hr_access_module *am = &p->access.modules[i];
        for (size_t m = 0; m < p->nmodules && !am->path.ptr; m++) {
            const struct hr_module *mod = &p->modules[m];
            for (uint32_t s = 0; s < mod->nsegs; s++) {
                if (am->addr >= mod->segs[s].start && am->addr < mod->segs[s].end) {
                    am->path = mod->path;
                    break;
                }
            }
        }
    }
}
