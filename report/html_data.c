/* The HTML page's data: one compact JSON object with the process, its summary, a string and
 * frame table, the tree of stack paths and one row of figures per context (the layout is
 * described at the top of report/html/report.js). Sized by the distinct frames and paths, not
 * by contexts times depth. */
#include <inttypes.h>
#include <stdlib.h>

#include "hr_frames.h"
#include "html_internal.h"

void hr_html_json_string(FILE *out, const char *s, size_t len)
{
    const unsigned char *u = (const unsigned char *)s;
    putc('"', out);
    for (size_t i = 0; i < len;) {
        unsigned char c = u[i];
        size_t n = c < 0x80 ? 1 : hr_utf8_seq_len(u + i, len - i);
        if (c == '"' || c == '\\')
            fprintf(out, "\\%c", c);
        else if (c < 0x20 || c == '<') /* '<': no "</script>" can end the element early */
            fprintf(out, "\\u%04x", c);
        else if (n)
            fwrite(u + i, 1, n, out);
        else
            fputs("\\ufffd", out);
        i += n ? n : 1;
    }
    putc('"', out);
}

static void hr_html_cstr(FILE *out, const char *s)
{
    size_t n = 0;
    while (s[n])
        n++;
    hr_html_json_string(out, s, n);
}

static void hr_html_str(FILE *out, struct hr_str s)
{
    hr_html_json_string(out, s.ptr ? s.ptr : "", s.len);
}

static void hr_html_process(FILE *out, const struct hr_profile *p)
{
    const struct hpf_process *pr = &p->process;
    fputs(",\"process\":{\"argv\":[", out);
    for (uint32_t i = 0; i < pr->argc; i++) {
        if (i)
            putc(',', out);
        hr_html_str(out, p->argv[i]);
    }
    fputs("],\"exe\":", out);
    hr_html_str(out, p->executable);
    fputs(",\"backend\":", out);
    hr_html_str(out, p->backend);
    fputs(",\"allocator\":", out);
    hr_html_str(out, p->allocator);
    fprintf(out,
            ",\"pid\":%" PRIu32 ",\"ppid\":%" PRIu32 ",\"start_unix_ns\":%" PRIu64
            ",\"dump_ms\":%" PRIu64 ",\"dump_seq\":%" PRIu32 ",\"dump_reason\":%" PRIu32
            ",\"unwinder\":%" PRIu32 ",\"stack_depth\":%" PRIu32 ",\"forked_from\":%" PRIu32 "}",
            pr->pid, pr->ppid, pr->start_unix_ns, pr->dump_ms, pr->dump_seq, pr->dump_reason,
            pr->unwinder, pr->stack_depth, pr->forked_from);
}

static void hr_html_summary(FILE *out, const struct hpf_summary *s)
{
    const struct {
        const char *name;
        uint64_t v;
    } f[] = {
        {"total_allocs", s->total_allocs},       {"total_frees", s->total_frees},
        {"total_bytes", s->total_bytes},         {"live_count", s->live_count},
        {"live_size", s->live_size},             {"peak_live_size", s->peak_live_size},
        {"peak_live_count", s->peak_live_count}, {"peak_ms", s->peak_ms},
        {"contexts", s->contexts},               {"unprofiled_allocs", s->unprofiled_allocs},
        {"evicted_hibs", s->evicted_hibs},       {"truncated_stacks", s->truncated_stacks},
        {"killed_by", s->killed_by},             {"metadata_bytes", s->metadata_bytes},
    };
    fputs(",\"summary\":{", out);
    for (size_t i = 0; i < sizeof f / sizeof f[0]; i++)
        fprintf(out, "%s\"%s\":%" PRIu64, i ? "," : "", f[i].name, f[i].v);
    putc('}', out);
}

/* A profile cut short (docs/REPORT.md): where, and what the cut took. */
static void hr_html_cut(FILE *out, const struct hr_profile *p)
{
    const struct hr_cut *c = &p->cut;
    if (!c->cut) {
        fputs(",\"cut\":null", out);
        return;
    }
    int one = !p->sources;
    fprintf(out, ",\"cut\":{\"files\":%zu,\"size\":%" PRIu64 ",\"records\":%" PRIu64
            ",\"dropped\":%" PRIu64 ",\"summary_rebuilt\":%d}", c->files, one ? c->size : 0,
            one ? c->records : 0, c->dropped_contexts, c->summary_rebuilt);
}

static void hr_html_access(FILE *out, const struct hr_profile *p)
{
    if (!p->access.present) {
        fputs(",\"access\":null", out);
        return;
    }
    const char *names[3];
    size_t n = hr_access_mode_names(p->access.rec.modes, names);
    fputs(",\"access\":{\"modes\":[", out);
    for (size_t i = 0; i < n; i++)
        fprintf(out, "%s\"%s\"", i ? "," : "", names[i]);
    fprintf(out, "],\"granule\":%" PRIu32 ",\"rw_apart\":%d}", hr_access_granule(p),
            hr_access_rw_apart(p));
}

/* strs, frames (name, file, line, module, inlined: five numbers each) and nodes: for nodes
 * 1.. (node 0 is the root) the distance back to the parent and the frame. A stack's nodes are
 * made one after the other, so that distance is mostly 1: a digit, where the parent's number
 * would take six or seven. */
static void hr_html_frames(FILE *out, const struct hr_ftab *t)
{
    fputs(",\"strs\":[", out);
    for (size_t i = 0; i < t->nstrs; i++) {
        if (i)
            putc(',', out);
        hr_html_cstr(out, t->strs[i]);
    }
    fputs("],\"frames\":[", out);
    for (size_t i = 0; i < t->nframes; i++) {
        const struct hr_ftab_frame *f = &t->frames[i];
        fprintf(out, "%s%" PRIu32 ",%" PRIu32 ",%d,%" PRIu32 ",%d", i ? "," : "", f->name,
                f->file, f->line, f->module, f->inlined);
    }
    fputs("],\"nodes\":[", out);
    for (size_t i = 1; i < t->nnodes; i++)
        fprintf(out, "%s%zu,%" PRIu32, i > 1 ? "," : "", i - t->nodes[i].parent,
                t->nodes[i].frame);
    putc(']', out);
}

/* The columns of a context row, in the order hr_html_contexts writes them; pool: 1 for the
 * objects of a program's own pools (heapprof_pool_alloc). */
static const char hr_html_cols[] =
    "\"cols\":[\"id\",\"node\",\"alloc_bytes\",\"alloc_count\",\"inuse_bytes\",\"inuse_count\","
    "\"peak_bytes\",\"peak_count\",\"accesses\",\"lifetime_ms\",\"min_size\",\"max_size\","
    "\"writes\",\"pool\"]";

static void hr_html_contexts(FILE *out, const struct hr_profile *p, const struct hr_ftab *t,
                             struct hr_context **order)
{
    static const enum hr_metric m[] = {
        HR_METRIC_ALLOC_BYTES, HR_METRIC_ALLOC_COUNT, HR_METRIC_INUSE_BYTES,
        HR_METRIC_INUSE_COUNT, HR_METRIC_PEAK_BYTES,  HR_METRIC_PEAK_COUNT,
        HR_METRIC_ACCESSES,    HR_METRIC_LIFETIME_MS,
    };
    fprintf(out, ",%s,\"ctx\":[", hr_html_cols);
    for (size_t i = 0; i < p->ncontexts; i++) {
        const struct hr_context *c = order[i];
        fprintf(out, "%s%" PRIu32 ",%" PRIu32, i ? "," : "", c->context_id,
                t->ctx_node[c - p->contexts]);
        for (size_t k = 0; k < sizeof m / sizeof m[0]; k++)
            fprintf(out, ",%" PRId64, hr_metric_value(p, c, m[k]));
        /* A context that saw no block has no minimum: 0 rather than whatever was stored. */
        fprintf(out, ",%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",%d",
                c->hib.alloc_count ? c->hib.min_size : 0, c->hib.max_size,
                c->hib.total_write_count, (c->live.flags & HPF_LIVE_POOL) != 0);
    }
    /* Access histograms: [row, [bins...]] for the rows that have one. */
    fputs("],\"hist\":[", out);
    int first = 1;
    for (size_t i = 0; i < p->ncontexts; i++) {
        const struct hr_context *c = order[i];
        if (!c->hist_bins)
            continue;
        fprintf(out, "%s[%zu,[", first ? "" : ",", i);
        first = 0;
        for (uint32_t b = 0; b < c->hist_bins; b++)
            fprintf(out, "%s%" PRIu64, b ? "," : "", c->hist[b]);
        fputs("]]", out);
    }
    putc(']', out);
}

/* One point per loaded profile: the heap of each dump, for the chart over time. The process's
 * start in ms of the wall clock puts the dumps of several processes on one time axis. */
static void hr_html_timeline(FILE *out, const struct hr_profile *p,
                             const struct hr_output_opts *opts)
{
    struct hr_profile *const *v = opts->inputs;
    size_t n = opts->ninputs;
    const struct hr_profile *self = p;
    if (!v || !n) {
        v = (struct hr_profile *const *)&self;
        n = 1;
    }
    fputs(",\"timeline\":[", out);
    for (size_t i = 0; i < n; i++) {
        const struct hr_profile *q = v[i];
        fprintf(out,
                "%s[%" PRIu32 ",%" PRIu32 ",%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",%" PRIu64
                ",%" PRIu32 ",%" PRIu64 ",%" PRIu64 ",%" PRIu64 "]",
                i ? "," : "", q->process.pid, q->process.dump_seq, q->process.dump_ms,
                q->summary.live_size, q->summary.live_count, q->summary.total_bytes,
                q->process.dump_reason, q->summary.peak_ms, q->summary.peak_live_size,
                q->process.start_unix_ns / 1000000);
    }
    putc(']', out);
}

int hr_html_data(FILE *out, const struct hr_profile *p, const struct hr_output_opts *opts)
{
    struct hr_symbolizer *sym = hr_symbolizer_new(p, opts->warn);
    struct hr_context **order = hr_contexts_sorted(p, opts->sort);
    struct hr_ftab t;
    if (!sym || !order || hr_ftab_build(&t, p, sym, 0)) {
        hr_symbolizer_free(sym);
        free(order);
        return -1;
    }
    fputs("{\"v\":1,\"file\":", out);
    hr_html_cstr(out, p->path ? p->path : "");
    hr_html_process(out, p);
    hr_html_summary(out, &p->summary);
    hr_html_cut(out, p);
    hr_html_access(out, p);
    fprintf(out, ",\"diff\":%d,\"metric\":\"%s\"", p->diff_base != NULL,
            hr_metric_name(opts->metric));
    hr_html_frames(out, &t);
    hr_html_contexts(out, p, &t, order);
    hr_html_timeline(out, p, opts);
    fputs("}", out);
    hr_ftab_free(&t);
    free(order);
    hr_symbolizer_free(sym);
    return 0;
}
