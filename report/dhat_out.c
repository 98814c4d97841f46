/* The DHAT output: one profile as the JSON of Valgrind's DHAT (dhatFileVersion 2, mode
 * "heap"), which Valgrind's viewer dh_view.html opens; docs/REPORT.md ("dhat") maps each
 * DHAT field to heapprof's figures. */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "hr_arrays.h"
#include "hr_intern.h"
#include "hr_metric.h"
#include "hr_output.h"
#include "hr_symbolize.h"

/* Times are written in microseconds: the viewer shows rates per million time units ("Mtu"),
 * so that makes them per second. heapprof's clock counts milliseconds. */
#define HR_DHAT_US_PER_MS 1000u
/* Blocks of an average lifetime up to this are "short-lived" (DHAT's tuth): one tick of the
 * shim's millisecond clock, i.e. freed within the millisecond they were allocated in. */
#define HR_DHAT_SHORT_US 1000u
/* DHAT keeps per-byte access counts for blocks up to 1024 bytes, and latches at 0xffff,
 * which the viewer shows as infinity. */
#define HR_DHAT_ACC_MAX_SIZE 1024u
#define HR_DHAT_ACC_LATCH 0xffffu
/* heapprof counts an access per load or store of up to 8 bytes (docs/USAGE.md). */
#define HR_DHAT_ACCESS_BYTES 8u

/* A pc's frames in DHAT's frame table: len of them from frames[at]. */
struct hr_dhat_chain {
    uint32_t at, len;
};

struct hr_dhat {
    const struct hr_profile *p;
    struct hr_symbolizer *sym;
    struct hr_strtab ftbl;      /* DHAT's frame table; ftbl[0] is "[root]" */
    struct hr_u64map chain_of;  /* pc -> 1 + index of its chain in chains */
    struct hr_dhat_chain *chains;
    uint32_t *frames;
    size_t nchains, chains_cap, nframes, frames_cap;
    int oom;
};

/* One frame in DHAT's words: "0xADDR: function (file:line)", or "(in module)" without a
 * source line, "???" for an unknown function. A malloc'ed string, NULL when out of memory. */
static char *hr_dhat_frame_text(const struct hr_frame *g)
{
    const char *file = strrchr(g->file, '/');
    file = file ? file + 1 : g->file; /* DHAT shows file names without their directory */
    const char *fn = g->function[0] ? g->function : "???";
    char *s = NULL;
    int r;
    if (g->file[0] && g->line)
        r = asprintf(&s, "0x%" PRIx64 ": %s (%s:%d)", g->pc, fn, file, g->line);
    else if (g->module[0])
        r = asprintf(&s, "0x%" PRIx64 ": %s (in %s)", g->pc, fn, g->module);
    else
        r = asprintf(&s, "0x%" PRIx64 ": %s", g->pc, fn);
    return r < 0 ? NULL : s;
}

static int hr_dhat_push_frame(struct hr_dhat *d, uint32_t f)
{
    if (hr_grow(&d->frames, &d->frames_cap, d->nframes, sizeof *d->frames, 1024))
        return -1;
    d->frames[d->nframes++] = f;
    return 0;
}

/* The ftbl indices of pc's frames (inlined functions first, as DHAT lists them, each with
 * the same address): *n of them from the returned position in d->frames; -1 out of memory. */
static int64_t hr_dhat_chain(struct hr_dhat *d, uint64_t pc, uint32_t *n)
{
    uint32_t k = hr_u64map_get(&d->chain_of, pc);
    if (k) {
        *n = d->chains[k - 1].len;
        return d->chains[k - 1].at;
    }
    if (hr_grow(&d->chains, &d->chains_cap, d->nchains, sizeof *d->chains, 1024))
        return -1;
    struct hr_frame f;
    hr_symbolize(d->sym, pc, &f);
    size_t at = d->nframes;
    for (const struct hr_frame *g = &f; g; g = g->next) {
        char *text = hr_dhat_frame_text(g);
        int64_t i = text ? hr_strtab_addz(&d->ftbl, text) : -1;
        free(text);
        if (i < 0 || hr_dhat_push_frame(d, (uint32_t)i))
            return -1;
    }
    d->chains[d->nchains] = (struct hr_dhat_chain){(uint32_t)at, (uint32_t)(d->nframes - at)};
    if (hr_u64map_put(&d->chain_of, pc, (uint32_t)++d->nchains))
        return -1;
    *n = (uint32_t)(d->nframes - at);
    return (int64_t)at;
}

/* Stack order, for bringing contexts with the same stack together: the viewer refuses two
 * program points with the same frames, so those become one. */
static int hr_stack_cmp(const void *a, const void *b)
{
    const struct hr_context *x = *(const struct hr_context *const *)a;
    const struct hr_context *y = *(const struct hr_context *const *)b;
    if (x->depth != y->depth)
        return x->depth < y->depth ? -1 : 1;
    for (uint32_t i = 0; i < x->depth; i++) {
        if (x->pcs[i] != y->pcs[i])
            return x->pcs[i] < y->pcs[i] ? -1 : 1;
    }
    return x->context_id < y->context_id ? -1 : x->context_id > y->context_id;
}

static int hr_same_stack(const struct hr_context *x, const struct hr_context *y)
{
    /* A context without a stack has no pcs array (NULL), which memcmp may not be given. */
    return x->depth == y->depth &&
           (!x->depth || memcmp(x->pcs, y->pcs, x->depth * sizeof *x->pcs) == 0);
}

/* The figures of one program point, DHAT's fields in this order: tb, tbk, tl, mb, mbk, gb, gbk,
 * eb, ebk, rb, wb. */
enum { HR_DHAT_NFIELDS = 11 };

/* A context's own figures. */
static void hr_dhat_fields(const struct hr_context *c, int64_t f[HR_DHAT_NFIELDS])
{
    const struct hpf_hib *h = &c->hib;
    f[0] = (int64_t)hr_metric_raw(c, HR_METRIC_ALLOC_BYTES);
    f[1] = (int64_t)hr_metric_raw(c, HR_METRIC_ALLOC_COUNT);
    f[2] = (int64_t)(h->total_lifetime_ms * HR_DHAT_US_PER_MS);
    /* Own maxima of several contexts with one stack: their sum bounds the maximum. */
    f[3] = (int64_t)c->live.max_live_size;
    f[4] = (int64_t)c->live.max_live_count;
    f[5] = (int64_t)c->live.peak_live_size;
    f[6] = (int64_t)c->live.peak_live_count;
    f[7] = (int64_t)c->live.live_size;
    f[8] = (int64_t)c->live.live_count;
    f[9] = (int64_t)(hr_access_reads(h) * HR_DHAT_ACCESS_BYTES);
    f[10] = (int64_t)(h->total_write_count * HR_DHAT_ACCESS_BYTES);
}

/* Adds a context's figures to sum: its own, or in a diff its change (new minus base). */
static void hr_dhat_add(int64_t sum[HR_DHAT_NFIELDS], const struct hr_profile *p,
                        const struct hr_context *c)
{
    int64_t f[HR_DHAT_NFIELDS], b[HR_DHAT_NFIELDS] = {0};
    hr_dhat_fields(c, f);
    if (p->diff_base && c->base)
        hr_dhat_fields(c->base, b);
    for (int i = 0; i < HR_DHAT_NFIELDS; i++)
        sum[i] = hr_add64(sum[i], hr_sub64(f[i], b[i]));
}

/* DHAT's per-byte access counts, for a context whose blocks all have one size up to 1024
 * bytes, all within the histogram bound. Histogram bin g counts the accesses to the g-th
 * 64-byte granule of the address space that a block overlaps, and a block starts at offset
 * r = 0 or 32 of its first granule (user pointers are 32-byte aligned: docs/FORMAT.md), so
 * bin g holds block bytes [64g - r, 64g - r + 64). r is taken as 32 when the histogram has a
 * bin more than a block starting at 0 could touch, else 0: exact when a context's blocks share
 * their offset, a blur of 32 bytes where they do not. A bin's count is spread evenly over its
 * bytes of the block, an access counting up to 8 bytes: a byte gets count * min(8, bytes) /
 * bytes, rounded up so any access shows, latched at 0xffff. Written as DHAT's run-length
 * pairs (-repeats, value) for runs of 3 or more bytes. */
static void hr_dhat_acc_run(FILE *out, uint64_t v, uint64_t n, int *first)
{
    if (n >= 3) {
        fprintf(out, "%s-%" PRIu64 ",%" PRIu64, *first ? "" : ",", n, v);
        *first = 0;
        return;
    }
    for (uint64_t k = 0; k < n; k++, *first = 0)
        fprintf(out, "%s%" PRIu64, *first ? "" : ",", v);
}

static void hr_dhat_acc(FILE *out, const struct hr_profile *p, const struct hr_context *c)
{
    const struct hpf_hib *h = &c->hib;
    uint64_t gran = hr_access_granule(p), size = h->max_size;
    uint64_t bound = (uint64_t)p->access.rec.hist_bins * gran; /* largest histogrammed block */
    if (!p->access.present || !h->alloc_count || h->min_size != size || size == 0 ||
        size > HR_DHAT_ACC_MAX_SIZE || size + gran / 2 > bound || gran < 16)
        return;
    uint64_t r = c->hist_bins > (size + gran - 1) / gran ? gran / 2 : 0;
    fputs(",\"acc\":[", out);
    int first = 1;
    uint64_t run_v = 0, run_n = 0; /* the run being gathered: run_n bytes of value run_v */
    for (uint64_t g = 0; g * gran < size + r; g++) {
        uint64_t lo = g * gran > r ? g * gran - r : 0;
        uint64_t hi = (g + 1) * gran - r < size ? (g + 1) * gran - r : size;
        uint64_t bytes = hi - lo, count = g < c->hist_bins ? c->hist[g] : 0;
        uint64_t w = bytes < HR_DHAT_ACCESS_BYTES ? bytes : HR_DHAT_ACCESS_BYTES;
        uint64_t v = (count * w + bytes - 1) / bytes;
        if (v > HR_DHAT_ACC_LATCH)
            v = HR_DHAT_ACC_LATCH;
        if (run_n && v != run_v) {
            hr_dhat_acc_run(out, run_v, run_n, &first);
            run_n = 0;
        }
        run_v = v;
        run_n += bytes;
    }
    hr_dhat_acc_run(out, run_v, run_n, &first);
    fputc(']', out);
}

/* DHAT has no negative figures: a diff is two trees under two outermost frames of their own,
 * one with every figure that grew (new minus base, where positive), one with every figure that
 * shrank (base minus new, where positive). A context whose bytes grew and whose lifetimes
 * shrank is in both. */
enum hr_dhat_side { HR_DHAT_OWN, HR_DHAT_GREW, HR_DHAT_SHRANK };
static const char *const hr_dhat_side_frame[] = {
    [HR_DHAT_GREW] = "[grew: new profile minus base]",
    [HR_DHAT_SHRANK] = "[shrank: base profile minus new]",
};

/* One entry of "pps" for the contexts v[0..n) (one stack), on one side of a diff (its frame:
 * side_frame); 0, or -1 when out of memory. */
static int hr_dhat_pp(FILE *out, struct hr_dhat *d, struct hr_context *const *v, size_t n,
                      enum hr_dhat_side side, uint32_t side_frame, int *first)
{
    int64_t sum[HR_DHAT_NFIELDS] = {0};
    uint64_t f[HR_DHAT_NFIELDS];
    for (size_t i = 0; i < n; i++)
        hr_dhat_add(sum, d->p, v[i]);
    int none = 1;
    for (int i = 0; i < HR_DHAT_NFIELDS; i++) {
        int64_t x = side == HR_DHAT_SHRANK ? hr_sub64(0, sum[i]) : sum[i];
        f[i] = x > 0 ? (uint64_t)x : 0;
        none &= f[i] == 0;
    }
    if (none)
        return 0; /* a context that never allocated, or no change on this side */
    fprintf(out, "%s\n{\"tb\":%" PRIu64 ",\"tbk\":%" PRIu64 ",\"tl\":%" PRIu64
            ",\"mb\":%" PRIu64 ",\"mbk\":%" PRIu64 ",\"gb\":%" PRIu64 ",\"gbk\":%" PRIu64
            ",\"eb\":%" PRIu64 ",\"ebk\":%" PRIu64,
            *first ? "" : ",", f[0], f[1], f[2], f[3], f[4], f[5], f[6], f[7], f[8]);
    *first = 0;
    if (d->p->access.present) {
        fprintf(out, ",\"rb\":%" PRIu64 ",\"wb\":%" PRIu64, f[9], f[10]);
        if (n == 1 && side == HR_DHAT_OWN) /* histograms of a change would be negative */
            hr_dhat_acc(out, d->p, v[0]);
    }
    fputs(",\"fs\":[", out);
    int any = 0;
    for (uint32_t i = 0; i < v[0]->depth; i++) {
        uint32_t k;
        int64_t at = hr_dhat_chain(d, v[0]->pcs[i], &k);
        if (at < 0)
            return -1;
        for (uint32_t j = 0; j < k; j++, any = 1)
            fprintf(out, "%s%" PRIu32, any ? "," : "", d->frames[at + j]);
    }
    if (side != HR_DHAT_OWN) /* outermost */
        fprintf(out, "%s%" PRIu32, any ? "," : "", side_frame);
    fputs("]}", out);
    return 0;
}

/* The header: mode, units, command line, pid, times. The program's time (te) is at least one
 * tick of the clock: the viewer divides by it for rates. */
static int hr_dhat_header(FILE *out, const struct hr_profile *p)
{
    fprintf(out, "{\"dhatFileVersion\":2,\n\"mode\":\"heap\",\n\"verb\":\"Allocated\",\n"
                 "\"bklt\":true,\n\"bkacc\":%s,\n\"tu\":\"\xc2\xb5s\",\n\"Mtu\":\"s\",\n"
                 "\"tuth\":%u,\n\"cmd\":",
            p->access.present ? "true" : "false", HR_DHAT_SHORT_US);
    /* argv joined by spaces, as DHAT shows a command */
    size_t at;
    char *cmd = hr_command_line(p, &at);
    if (!cmd)
        return -1;
    hr_json_string(out, cmd, at);
    free(cmd);
    fprintf(out, ",\n\"pid\":%" PRIu32 ",\n\"te\":%" PRIu64 ",\n\"tg\":%" PRIu64 ",\n\"pps\":[",
            p->process.pid, (p->process.dump_ms ? p->process.dump_ms : 1) * HR_DHAT_US_PER_MS,
            p->summary.peak_ms * HR_DHAT_US_PER_MS);
    return 0;
}

static void hr_dhat_free(struct hr_dhat *d)
{
    hr_symbolizer_free(d->sym);
    hr_strtab_free(&d->ftbl);
    hr_u64map_free(&d->chain_of);
    free(d->chains);
    free(d->frames);
}

int hr_write_dhat(FILE *out, const struct hr_profile *p, const struct hr_output_opts *opts)
{
    struct hr_dhat d = {.p = p};
    struct hr_context **v = hr_contexts_sorted(p, opts->sort);
    d.sym = hr_symbolizer_new(p, opts->warn);
    if (!v || !d.sym || hr_strtab_addz(&d.ftbl, "[root]") != 0) {
        free(v);
        hr_dhat_free(&d);
        return -1;
    }
    size_t n = p->ncontexts;
    if (opts->json_top && opts->json_top < n)
        n = opts->json_top; /* --top N: the first N by --sort, as in JSON */
    qsort(v, n, sizeof *v, hr_stack_cmp);
    int first = 1, r = hr_dhat_header(out, p);
    /* In a diff, the two sides' frames come right after "[root]": ftbl[1] and ftbl[2]. */
    if (r == 0 && p->diff_base &&
        (hr_strtab_addz(&d.ftbl, hr_dhat_side_frame[HR_DHAT_GREW]) != 1 ||
         hr_strtab_addz(&d.ftbl, hr_dhat_side_frame[HR_DHAT_SHRANK]) != 2))
        r = -1;
    for (size_t i = 0, j; i < n && r == 0; i = j) {
        for (j = i + 1; j < n && hr_same_stack(v[i], v[j]); j++)
            ;
        if (!p->diff_base)
            r = hr_dhat_pp(out, &d, v + i, j - i, HR_DHAT_OWN, 0, &first);
        else if ((r = hr_dhat_pp(out, &d, v + i, j - i, HR_DHAT_GREW, 1, &first)) == 0)
            r = hr_dhat_pp(out, &d, v + i, j - i, HR_DHAT_SHRANK, 2, &first);
    }
    fputs("\n],\n\"ftbl\":[", out);
    for (size_t i = 0; i < d.ftbl.n; i++) {
        fputs(i ? ",\n" : "\n", out);
        hr_json_string(out, d.ftbl.strs[i], d.ftbl.lens[i]);
    }
    fputs("\n]\n}\n", out);
    free(v);
    hr_dhat_free(&d);
    return r;
}
