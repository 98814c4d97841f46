/* In-memory model of one parsed heapprof profile, and the functions that build it:
 * hr_profile_load/parse (parse_load.c, parse.c, parse_access.c, parse_cut.c), the context
 * table (contexts.c), HIB merging (hib_merge.c), context ordering (sort.c) and the figures
 * derived from access data (access.c). */
#ifndef HR_PROFILE_H
#define HR_PROFILE_H

#include <stddef.h>
#include <stdint.h>

#include "format/format.h"

/* Room for one error line; parse errors never need more. */
#define HR_ERR_MAX 256

/* A string inside the profile's buffer: not NUL-terminated, may hold any byte. */
struct hr_str {
    const char *ptr;
    uint32_t len;
};

struct hr_module {
    uint64_t load_bias;
    uint32_t nsegs;
    struct hpf_segment *segs; /* copied out of the buffer so they are always aligned */
    const uint8_t *build_id;
    uint32_t build_id_len;
    struct hr_str path;
};

struct hr_context {
    uint32_t context_id;
    unsigned has_hib : 1;
    unsigned has_live : 1;
    unsigned has_stack : 1;
    unsigned stack_by_ref : 1; /* has_stack through a STACK_REFS entry; resolved after parsing */
    uint32_t stack_node;       /* that entry's node of the frame tree */
    struct hpf_hib hib;   /* all HIB records of this context merged; zeros if none */
    struct hpf_live live; /* zeros if no LIVE record */
    uint32_t depth;
    uint64_t *pcs; /* innermost first; return addresses */
    uint64_t *hist;     /* ACCESS_HIST records of kind HPF_HIST_GRANULE summed bin by bin */
    uint32_t hist_bins; /* entries of hist; 0 (hist NULL) when the context has none */
    uint64_t *word_hist; /* kind HPF_HIST_WORD summed: accesses per 8-byte word */
    uint32_t word_bins;  /* entries of word_hist; 0 (NULL) when none */
    uint64_t *word_sat;  /* kind HPF_HIST_WORD_SATURATED summed: blocks whose word i saturated */
    uint32_t word_sat_bins;
    /* In a diff profile (hr_profile.diff_base set): the same context in the base profile, or
     * NULL when the base has none (hr_metric.h). NULL in every other profile. */
    const struct hr_context *base;
};

/* The ACCESS record: which instrumented modules fed the shadow, and how. */
struct hr_access_module {
    uint64_t addr;
    uint32_t mode;      /* HPF_ACCESS_* bits */
    struct hr_str path; /* the MODULE whose segments hold addr; empty if none does */
};

struct hr_access {
    int present; /* an ACCESS record was read: the profile has access data */
    struct hpf_access rec;
    struct hr_access_module *modules; /* rec.nmodules entries */
    /* The per-word histograms' parameters after the modules; all 0 when the record has none
     * (an older shim) or no word plane was in use (words.word 0). */
    struct hpf_access_words words;
};

/* One input of a merged profile (hr_merge.h), in command-line order. */
struct hr_source {
    char *path;
    struct hpf_process process; /* its PROCESS record (pid, start, dump_seq, dump_reason) */
    int cut;                    /* it was cut short (hr_cut.cut) */
    uint64_t cut_size;          /* then: its length */
    int used;                   /* 0: superseded by a later dump of the same process */
    int superseded_by;          /* index of that later dump in sources, -1 when used */
};

/* A profile cut short: the file ends without its END record, its process killed while writing
 * it. Only the complete records before the cut are read (docs/REPORT.md, "Profiles cut short");
 * all 0 in a complete profile. */
struct hr_cut {
    int cut;                   /* no END record: the file simply ends */
    uint64_t size;             /* the file's length (the cut) */
    uint64_t complete;         /* bytes of its complete records, file header included */
    uint64_t records;          /* complete records read */
    uint64_t dropped_contexts; /* contexts left out: the cut took their stack, LIVE or a HIB */
    int summary_rebuilt;       /* the SUMMARY record was cut: sums of the contexts kept */
    size_t files;              /* in a merged profile: how many used inputs were cut */
};

struct hr_profile {
    char *path;
    uint8_t *data; /* the whole file; hr_str values point into it */
    size_t size;

    struct hpf_process process;
    struct hr_str backend;
    struct hr_str executable;
    struct hr_str *argv;     /* process.argc entries */
    struct hr_str allocator; /* the allocator's object; empty in files written without it */

    struct hpf_summary summary;

    uint32_t version; /* of the file's format */

    /* The frame tree of version 2 files: node i (1..nnodes) has pc node_pc[i] and parent
     * node_parent[i] < i; index 0 is the root. Freed once the stacks are resolved. */
    uint64_t *node_pc;
    uint32_t *node_parent;
    size_t nnodes, nodes_cap;

    struct hr_module *modules;
    size_t nmodules;

    struct hr_context *contexts;
    size_t ncontexts;
    size_t contexts_cap;
    uint32_t *index; /* open-addressing table of context positions + 1 (0 = empty) */
    size_t index_cap;

    struct hr_access access;

    uint64_t records;        /* records before END */
    struct hr_cut cut;
    uint64_t unknown_records; /* skipped for forward compatibility */
    /* Set in the profile that a diff builds (--diff BASE NEW): the base it is compared with.
     * Export formats then show each context's figures as new minus base (hr_metric.h). */
    const struct hr_profile *diff_base;
    /* A merged profile's inputs (hr_merge.h); NULL and 0 in a profile read from one file. */
    struct hr_source *sources;
    size_t nsources;
};

/* The most bytes hr_profile_load reads: a larger regular file is refused, a pipe that delivers
 * more (or whose records declare more) is an error. A python3 profile of 16k contexts is about
 * 1 MB. The environment's HEAPPROF_REPORT_MAX_SIZE overrides it; tests lower hr_profile_max. */
#define HR_PROFILE_MAX_SIZE ((size_t)1 << 30)
extern size_t hr_profile_max;

/* Reads and parses FILE (parse_load.c): a regular file up to its size when opened, a pipe or
 * FIFO up to hr_profile_max bytes; directories and devices are refused. Returns 0, or -1 with a
 * one-line reason in err (without the path). */
int hr_profile_load(struct hr_profile *p, const char *path, char err[HR_ERR_MAX]);

/* Parses a profile held in memory; takes ownership of data (malloc'ed) in every case. A
 * profile cut short (no END) is read up to its last complete record and marked in p->cut;
 * -1 only when nothing usable precedes the cut (docs/REPORT.md, "Profiles cut short"). */
int hr_profile_parse(struct hr_profile *p, const char *path, uint8_t *data, size_t size,
                     char err[HR_ERR_MAX]);

void hr_profile_free(struct hr_profile *p);

/* The context with this id, created with zero counters if absent; NULL when out of memory. */
struct hr_context *hr_context_get(struct hr_profile *p, uint32_t context_id);

/* The context with this id or NULL. */
struct hr_context *hr_context_find(const struct hr_profile *p, uint32_t context_id);

/* Removes the contexts keep() refuses (their memory freed), keeping the others' order. Returns
 * how many went. */
size_t hr_contexts_prune(struct hr_profile *p, int (*keep)(const struct hr_context *c));

/* Folds one more HIB record of the same context into acc (docs/FORMAT.md, "Merging HIBs"). */
void hr_hib_merge(struct hpf_hib *acc, const struct hpf_hib *rec);

/* Sort keys for contexts; the order is always descending, ties broken by context_id. */
enum hr_sort_key {
    HR_SORT_TOTAL_SIZE,
    HR_SORT_ALLOC_COUNT,
    HR_SORT_LIVE_SIZE,
    HR_SORT_PEAK_LIVE_SIZE,
    HR_SORT_MAX_LIVE_SIZE,
    HR_SORT_TOTAL_LIFETIME_MS,
    HR_SORT_TOTAL_ACCESS_COUNT,
    HR_SORT_ACCESS_DENSITY,
};

/* Parses a --sort name; returns 0 and sets *key, or -1. */
int hr_sort_key_parse(const char *name, enum hr_sort_key *key);
const char *hr_sort_key_name(enum hr_sort_key key);
/* In a diff profile: the context's figure for key minus its base counterpart's (c->base; 0 when
 * it has none). */
double hr_sort_key_change(const struct hr_context *c, enum hr_sort_key key);

/* Returns a malloc'ed array of pointers to p's contexts in report order, or NULL (no memory).
 * In a diff profile (diff_base set) the order is by the size of the change of the key against
 * the base, largest first, growth and shrinkage alike (hr_sort_key_change). */
struct hr_context **hr_contexts_sorted(const struct hr_profile *p, enum hr_sort_key key);

/* ---- Access figures (access.c), from a context's merged HIB. ---- */

/* Reads and writes are counted apart: only callback and gcc modules attached, none inline. */
int hr_access_rw_apart(const struct hr_profile *p);
/* The granule of p's histograms: the ACCESS record's, else the shim's 64 bytes. */
uint32_t hr_access_granule(const struct hr_profile *p);
/* The modes' names in bit order ("inline", "callbacks", "gcc"), at most 3. Returns how many. */
size_t hr_access_mode_names(uint32_t modes, const char *names[3]);

/* Reads: accesses minus writes (0 if a damaged profile has more writes). */
uint64_t hr_access_reads(const struct hpf_hib *h);
/* Accesses per allocated byte: total_access_count / total_size (0 for no byte). */
double hr_access_density(const struct hpf_hib *h);
/* Accesses per byte per second of lifetime: the density over the blocks' average lifetime,
 * i.e. total_access_count / (total_size * total_lifetime_ms / alloc_count / 1000). Returns -1
 * when the lifetimes add up to 0 ms (every block died within a tick of the shim's clock). */
double hr_access_density_per_s(const struct hpf_hib *h);
/* Byte-seconds the context's blocks held: total_size times the average lifetime, in seconds. */
double hr_access_byte_seconds(const struct hpf_hib *h);

/* The cold contexts of an access profile: blocks held long and touched little. Candidates are
 * contexts with byte-seconds > 0 whose accesses per byte-second are below a tenth of the
 * whole profile's (its accesses over its byte-seconds); they are ordered by byte-seconds,
 * largest first. Fills v (room for p->ncontexts) and returns how many; 0 without access data. */
size_t hr_access_cold(const struct hr_profile *p, struct hr_context **v);
/* The contexts with accesses, ordered by accesses per byte, highest first. Same contract. */
size_t hr_access_hottest(const struct hr_profile *p, struct hr_context **v);

#endif
