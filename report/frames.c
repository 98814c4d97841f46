/* The frame table and path tree of a profile's stacks (hr_frames.h): every pc symbolised once,
 * strings, frames and paths interned in open-addressing tables. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hr_arrays.h"
#include "hr_frames.h"

static uint64_t hr_mix(uint64_t x)
{
    x ^= x >> 33;
    x *= 0xff51afd7ed558ccdull;
    x ^= x >> 33;
    x *= 0xc4ceb9fe1a85ec53ull;
    return x ^ (x >> 33);
}

static uint64_t hr_str_hash(const char *s)
{
    uint64_t h = 0xcbf29ce484222325ull; /* FNV-1a */
    for (; *s; s++)
        h = (h ^ (unsigned char)*s) * 0x100000001b3ull;
    return hr_mix(h);
}

static uint64_t hr_frame_hash(const struct hr_ftab_frame *f)
{
    return hr_mix(((uint64_t)f->name << 32 | f->file) ^
                  hr_mix((uint64_t)f->module << 32 | (uint32_t)f->line) ^ (uint64_t)f->inlined);
}

static uint64_t hr_node_hash(uint32_t parent, uint32_t frame)
{
    return hr_mix((uint64_t)parent << 32 | frame);
}

/* The hash of entry i of one of the tables, to rehash it when its index grows. */
typedef uint64_t (*hr_entry_hash)(const struct hr_ftab *t, size_t i);

static uint64_t hr_str_entry(const struct hr_ftab *t, size_t i)
{
    return hr_str_hash(t->strs[i]);
}

static uint64_t hr_frame_entry(const struct hr_ftab *t, size_t i)
{
    return hr_frame_hash(&t->frames[i]);
}

static uint64_t hr_node_entry(const struct hr_ftab *t, size_t i)
{
    return hr_node_hash(t->nodes[i].parent, t->nodes[i].frame);
}

static uint64_t hr_pc_entry(const struct hr_ftab *t, size_t i)
{
    return hr_mix(t->pcs[i].pc);
}

/* Keeps the index of n entries (plus the one about to come) at most half full. */
static int hr_index_fit(const struct hr_ftab *t, uint32_t **idx, size_t *cap, size_t n,
                        size_t first, hr_entry_hash h)
{
    if ((n + 1) * 2 <= *cap)
        return 0;
    size_t ncap = *cap ? *cap * 2 : 256;
    uint32_t *ni = calloc(ncap, sizeof *ni);
    if (!ni)
        return -1;
    for (size_t i = first; i < n; i++) {
        size_t s = h(t, i) & (ncap - 1);
        while (ni[s])
            s = (s + 1) & (ncap - 1);
        ni[s] = (uint32_t)(i + 1);
    }
    free(*idx);
    *idx = ni;
    *cap = ncap;
    return 0;
}

/* The index of string s, added when new; -1 when out of memory. */
static long hr_str_intern(struct hr_ftab *t, const char *s)
{
    if (hr_index_fit(t, &t->str_idx, &t->str_cap, t->nstrs, 0, hr_str_entry) ||
        hr_grow(&t->strs, &t->strs_cap, t->nstrs, sizeof *t->strs, 64))
        return -1;
    size_t mask = t->str_cap - 1, i;
    for (i = hr_str_hash(s) & mask; t->str_idx[i]; i = (i + 1) & mask)
        if (strcmp(t->strs[t->str_idx[i] - 1], s) == 0)
            return t->str_idx[i] - 1;
    char *dup = strdup(s);
    if (!dup)
        return -1;
    t->strs[t->nstrs] = dup;
    t->str_idx[i] = (uint32_t)++t->nstrs;
    return (long)t->nstrs - 1;
}

static long hr_frame_intern(struct hr_ftab *t, const struct hr_ftab_frame *f)
{
    if (hr_index_fit(t, &t->frame_idx, &t->frame_cap, t->nframes, 0, hr_frame_entry) ||
        hr_grow(&t->frames, &t->frames_cap, t->nframes, sizeof *t->frames, 64))
        return -1;
    size_t mask = t->frame_cap - 1, i;
    for (i = hr_frame_hash(f) & mask; t->frame_idx[i]; i = (i + 1) & mask) {
        const struct hr_ftab_frame *g = &t->frames[t->frame_idx[i] - 1];
        if (g->name == f->name && g->file == f->file && g->module == f->module &&
            g->line == f->line && g->inlined == f->inlined)
            return t->frame_idx[i] - 1;
    }
    t->frames[t->nframes] = *f;
    t->frame_idx[i] = (uint32_t)++t->nframes;
    return (long)t->nframes - 1;
}

/* The node for frame called from parent; node 0 (the root) is never in the index. */
static long hr_node_intern(struct hr_ftab *t, uint32_t parent, uint32_t frame)
{
    if (hr_index_fit(t, &t->node_idx, &t->node_cap, t->nnodes, 1, hr_node_entry) ||
        hr_grow(&t->nodes, &t->nodes_cap, t->nnodes, sizeof *t->nodes, 64))
        return -1;
    size_t mask = t->node_cap - 1, i;
    for (i = hr_node_hash(parent, frame) & mask; t->node_idx[i]; i = (i + 1) & mask) {
        uint32_t n = t->node_idx[i] - 1;
        if (t->nodes[n].parent == parent && t->nodes[n].frame == frame)
            return n;
    }
    t->nodes[t->nnodes] = (struct hr_ftab_node){parent, frame};
    t->node_idx[i] = (uint32_t)++t->nnodes;
    return (long)t->nnodes - 1;
}

const char *hr_basename(const char *path)
{
    const char *s = strrchr(path, '/');
    return s ? s + 1 : path;
}

/* A frame without a function name: "module+0xOFFSET" (OFFSET from the module's load bias, as
 * addr2line takes it), or the bare address outside every module. */
static void hr_unnamed(char *buf, size_t n, const struct hr_profile *p, const struct hr_frame *f)
{
    uint64_t addr = f->pc ? f->pc - 1 : 0;
    for (size_t i = 0; f->module[0] && i < p->nmodules; i++) {
        const struct hr_module *m = &p->modules[i];
        for (uint32_t s = 0; s < m->nsegs; s++) {
            if (addr >= m->segs[s].start && addr < m->segs[s].end) {
                snprintf(buf, n, "%s+0x%" PRIx64, hr_basename(f->module), f->pc - m->load_bias);
                return;
            }
        }
    }
    snprintf(buf, n, "0x%" PRIx64, f->pc);
}

/* Interns one symbolised frame; its index or -1. */
static long hr_frame_of(struct hr_ftab *t, const struct hr_profile *p, const struct hr_frame *g,
                        int names_only)
{
    char buf[4200];
    const char *name = g->function;
    if (!name[0]) {
        hr_unnamed(buf, sizeof buf, p, g);
        name = buf;
    }
    long n = hr_str_intern(t, name);
    long file = names_only ? 0 : hr_str_intern(t, g->file);
    long mod = names_only ? 0 : hr_str_intern(t, g->module);
    if (n < 0 || file < 0 || mod < 0)
        return -1;
    struct hr_ftab_frame f = {.name = (uint32_t)n, .file = (uint32_t)file,
                              .module = (uint32_t)mod, .line = names_only ? 0 : g->line,
                              .inlined = names_only ? 0 : g->inlined};
    return hr_frame_intern(t, &f);
}

/* The position of pc's frames in t->pc_*: symbolised and interned the first time. */
static long hr_pc_frames(struct hr_ftab *t, const struct hr_profile *p, struct hr_symbolizer *sym,
                         uint64_t pc, int names_only)
{
    if (hr_index_fit(t, &t->pc_idx, &t->pc_cap, t->npcs, 0, hr_pc_entry))
        return -1;
    size_t mask = t->pc_cap - 1, i;
    for (i = hr_mix(pc) & mask; t->pc_idx[i]; i = (i + 1) & mask)
        if (t->pcs[t->pc_idx[i] - 1].pc == pc)
            return t->pc_idx[i] - 1;
    if (hr_grow(&t->pcs, &t->pcs_cap, t->npcs, sizeof *t->pcs, 64))
        return -1;
    struct hr_frame f;
    hr_symbolize(sym, pc, &f);
    size_t start = t->nchain;
    /* The chain runs from the innermost inlined function outwards; stored reversed. */
    for (const struct hr_frame *g = &f; g; g = g->next) {
        long fi = hr_frame_of(t, p, g, names_only);
        if (fi < 0 || hr_grow(&t->chain, &t->chain_cap, t->nchain, sizeof *t->chain, 64))
            return -1;
        t->chain[t->nchain++] = (uint32_t)fi;
    }
    for (size_t a = start, b = t->nchain - 1; a < b; a++, b--) {
        uint32_t x = t->chain[a];
        t->chain[a] = t->chain[b];
        t->chain[b] = x;
    }
    t->pcs[t->npcs] = (struct hr_ftab_pc){pc, (uint32_t)start, (uint32_t)(t->nchain - start)};
    t->pc_idx[i] = (uint32_t)++t->npcs;
    return (long)t->npcs - 1;
}

int hr_ftab_build(struct hr_ftab *t, const struct hr_profile *p, struct hr_symbolizer *sym,
                  int names_only)
{
    memset(t, 0, sizeof *t);
    t->ctx_node = calloc(p->ncontexts ? p->ncontexts : 1, sizeof *t->ctx_node);
    /* node 0: the root, with no parent or frame */
    if (!t->ctx_node || hr_str_intern(t, "") != 0 ||
        hr_grow(&t->nodes, &t->nodes_cap, 0, sizeof *t->nodes, 64))
        goto oom;
    t->nodes[0] = (struct hr_ftab_node){0, 0};
    t->nnodes = 1;
    for (size_t c = 0; c < p->ncontexts; c++) {
        const struct hr_context *ctx = &p->contexts[c];
        uint32_t node = 0;
        for (uint32_t k = ctx->depth; k-- > 0;) { /* pcs are innermost first */
            long pi = hr_pc_frames(t, p, sym, ctx->pcs[k], names_only);
            if (pi < 0)
                goto oom;
            for (uint32_t j = 0; j < t->pcs[pi].len; j++) {
                long n = hr_node_intern(t, node, t->chain[t->pcs[pi].start + j]);
                if (n < 0)
                    goto oom;
                node = (uint32_t)n;
            }
        }
        t->ctx_node[c] = node;
    }
    return 0;
oom:
    hr_ftab_free(t);
    return -1;
}

void hr_ftab_free(struct hr_ftab *t)
{
    for (size_t i = 0; i < t->nstrs; i++)
        free(t->strs[i]);
    free(t->strs);
    free(t->frames);
    free(t->nodes);
    free(t->ctx_node);
    free(t->str_idx);
    free(t->frame_idx);
    free(t->node_idx);
    free(t->pc_idx);
    free(t->pcs);
    free(t->chain);
    memset(t, 0, sizeof *t);
}
