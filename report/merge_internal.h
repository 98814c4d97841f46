/* What the merge's files share (merge.c, merge_modules.c, merge_fields.c, diff.c): the module
 * layout of the merged address space and the context table keyed by stacks. */
#ifndef HR_MERGE_INTERNAL_H
#define HR_MERGE_INTERNAL_H

#include <stddef.h>
#include <stdint.h>

#include "hr_profile.h"

/* A module of the merged profile: one file (same build id, else same path) however many
 * processes mapped it, at one load bias of the merged address space. */
struct hr_mmod {
    const struct hr_module *first; /* its first record in the inputs: path, build id */
    uint64_t bias;                 /* load bias in the merged profile */
    struct hpf_segment *rel;       /* segments relative to the bias, disjoint, sorted */
    uint32_t nrel;
    size_t caprel;
};

/* A segment of one input, and where its module went. */
struct hr_srange {
    uint64_t start, end;
    uint64_t bias; /* the input's load bias of this module */
    uint32_t mmod;
};

struct hr_minput {
    const struct hr_profile *p;
    int group; /* 0 the merged profile (or a diff's new side), 1 a diff's base */
    int used;
    struct hr_srange *ranges; /* sorted by start */
    size_t nranges;
};

struct hr_merger {
    struct hr_minput *in;
    size_t n;
    struct hr_mmod *mods;
    size_t nmods, capmods;
    uint64_t *raw; /* pc - 1 of every frame in no module, sorted (placement must avoid them) */
    size_t nraw, capraw;
    /* Stacks seen so far: open addressing, slots hold key index + 1. */
    struct hr_skey *keys;
    size_t nkeys, capkeys;
    uint32_t *slots;
    size_t capslots;
};

struct hr_skey {
    uint64_t hash;
    const uint64_t *pcs; /* the first context with this stack owns them */
    uint32_t depth;
};

/* merge_modules.c: the union of the used inputs' modules, each placed so no two overlap and
 * no frame outside a module falls into one. Then pcs map through hr_merge_pc. */
int hr_merge_modules(struct hr_merger *m, char err[HR_ERR_MAX]);
/* The pc of input i's return address pc in the merged address space. */
uint64_t hr_merge_pc(const struct hr_merger *m, size_t i, uint64_t pc);
/* The same for an address (not a return address): looked up as it is. */
uint64_t hr_merge_addr(const struct hr_merger *m, size_t i, uint64_t addr);
/* out's module array: one record per merged module, segments at their new bias; strings
 * copied to *pool (advanced). */
int hr_merge_write_modules(const struct hr_merger *m, struct hr_profile *out, char **pool);
void hr_merge_modules_free(struct hr_merger *m);

/* merge_fields.c: everything of a group's used inputs but the contexts and modules. */
int hr_merge_process(const struct hr_merger *m, int group, struct hr_profile *out);
/* Adds src's LIVE, HIB and histogram into dst (which has the merged id). */
int hr_merge_context_figures(struct hr_context *dst, const struct hr_context *src);
/* Bytes that every string the group's inputs hold would need; an upper bound for the pool. */
size_t hr_merge_pool_size(const struct hr_merger *m, int group);
/* Copies n bytes to *pool and returns an hr_str of them. */
struct hr_str hr_pool_put(char **pool, const char *s, uint32_t n);

/* merge.c: the merge of one group into out (used by diff.c). */
int hr_merge_run(struct hr_merger *m, char err[HR_ERR_MAX]);
int hr_merge_group(struct hr_merger *m, int group, struct hr_profile *out, char err[HR_ERR_MAX]);
void hr_merger_free(struct hr_merger *m);
#endif
