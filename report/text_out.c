/* The human-readable report: process header, totals, the sections of text_sections.c, then the
 * top contexts with their symbolised stacks, in the spirit of heaptrack_print and DHAT. */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "text_internal.h"

static const char *hr_reason_text(uint32_t r)
{
    switch (r) {
    case HPF_DUMP_EXIT: return "at exit";
    case HPF_DUMP_API: return "by heapprof_dump()";
    case HPF_DUMP_SIGNAL: return "on signal";
    case HPF_DUMP_INTERVAL: return "on interval";
    case HPF_DUMP_KILLED: return "when a signal ended the process";
    case HPF_DUMP_PEAK: return "when the heap reached a new peak (dump_peak_growth)";
    case HPF_DUMP_CREDENTIALS: return "before the process changed its user or root (provisional: it exec'd or ended without its exit profile)";
    default: return "for an unknown reason";
    }
}

static const char *hr_unwinder_text(uint32_t u)
{
    switch (u) {
    case HPF_UNWIND_FP: return "fp";
    case HPF_UNWIND_LIBUNWIND: return "libunwind";
    case HPF_UNWIND_CFI: return "cfi";
    default: return "unknown";
    }
}

/* avg of a total over a count, 0 for no count; double keeps small averages meaningful. */
static double hr_avg(uint64_t total, uint64_t count)
{
    return count ? (double)total / (double)count : 0.0;
}

/* A profile cut short: what it holds is what came before the cut (docs/REPORT.md). */
static void hr_text_cut(FILE *out, const struct hr_profile *p)
{
    const struct hr_cut *c = &p->cut;
    if (!c->cut)
        return;
    if (p->sources)
        fprintf(out, "  CUT SHORT    %zu of the profiles merged have no END record",
                c->files);
    else
        fprintf(out, "  CUT SHORT    at byte %" PRIu64 " (no END record): %" PRIu64
                " complete records read", c->size, c->records);
    fprintf(out, "; %" PRIu64 " context%s left out (the cut took some of their records)%s\n",
            c->dropped_contexts, c->dropped_contexts == 1 ? "" : "s",
            c->summary_rebuilt ? "; totals are the contexts' sums, peak unknown" : "");
}

static void hr_text_header(FILE *out, const struct hr_profile *p)
{
    const struct hpf_process *pr = &p->process;
    fputs("heapprof report: ", out);
    hr_text_string(out, p->path, strlen(p->path));
    fputs("\n\n", out);
    fprintf(out, "  process      pid %" PRIu32 ", parent %" PRIu32, pr->pid, pr->ppid);
    if (pr->forked_from)
        fprintf(out, ", forked from profiled pid %" PRIu32, pr->forked_from);
    fputs("\n  command      ", out);
    for (uint32_t i = 0, argc = hr_argc_shown(p); i < argc; i++) {
        if (i)
            putc(' ', out);
        hr_text_string(out, p->argv[i].ptr, p->argv[i].len);
    }
    fputs("\n  executable   ", out);
    hr_text_string(out, p->executable.ptr, p->executable.len);
    fprintf(out, "\n  duration     %" PRIu64 " ms, dump #%" PRIu32 " written %s", pr->dump_ms,
            pr->dump_seq, hr_reason_text(pr->dump_reason));
    if (pr->dump_reason == HPF_DUMP_KILLED && p->summary.killed_by) {
        const char *name = sigabbrev_np((int)p->summary.killed_by);
        fprintf(out, " (SIG%s)", name ? name : "?");
    }
    putc('\n', out);
    fputs("  backend      ", out);
    hr_text_string(out, p->backend.ptr, p->backend.len);
    if (p->allocator.len) {
        fputs(" (", out);
        hr_text_string(out, p->allocator.ptr, p->allocator.len);
        putc(')', out);
    }
    fprintf(out, ", unwinder %s, stack depth %" PRIu32 "\n", hr_unwinder_text(pr->unwinder),
            pr->stack_depth);
    hr_text_access_header(out, p);
    hr_text_cut(out, p);
    putc('\n', out);
}

/* "s" after a count other than one: "1 block", "0 blocks", "2 blocks". */
static const char *hr_s(uint64_t n) { return n == 1 ? "" : "s"; }

static void hr_text_totals(FILE *out, const struct hr_profile *p)
{
    const struct hpf_summary *s = &p->summary;
    char a[HR_BYTES_MAX], b[HR_BYTES_MAX];
    fputs("totals\n", out);
    fprintf(out, "  allocations  %" PRIu64 " (%s requested)\n", s->total_allocs,
            hr_format_bytes(a, s->total_bytes));
    fprintf(out, "  frees        %" PRIu64 "\n", s->total_frees);
    fprintf(out, "  peak heap    %s in %" PRIu64 " block%s at %" PRIu64 " ms",
            hr_format_bytes(a, s->peak_live_size), s->peak_live_count, hr_s(s->peak_live_count),
            s->peak_ms);
    if (s->peak_slack_bytes)
        fprintf(out, " (accurate to within %s)", hr_format_bytes(b, s->peak_slack_bytes));
    fprintf(out, "\n  leaked       %s in %" PRIu64 " block%s still live at the dump\n",
            hr_format_bytes(a, s->live_size), s->live_count, hr_s(s->live_count));
    fprintf(out, "  contexts     %" PRIu64 " (%" PRIu64 " allocation%s without context, %" PRIu64
                 " stack%s truncated, %" PRIu64 " evicted record%s)\n",
            s->contexts, s->unprofiled_allocs, hr_s(s->unprofiled_allocs), s->truncated_stacks,
            hr_s(s->truncated_stacks), s->evicted_hibs, hr_s(s->evicted_hibs));
    fprintf(out, "  bad frees    %" PRIu64 " foreign, %" PRIu64 " double\n", s->foreign_frees,
            s->double_frees);
    if (s->pool_unknown_frees || s->pool_dropped) /* only programs using the pool API */
        fprintf(out, "  pool API     %" PRIu64 " free%s of unknown objects, %" PRIu64
                " report%s dropped\n", s->pool_unknown_frees, hr_s(s->pool_unknown_frees),
                s->pool_dropped, hr_s(s->pool_dropped));
    if (s->headerless) /* blocks kept by address: some frees are seen only at a reuse */
        fprintf(out, "  allocator    profiled without headers, blocks kept by address: %" PRIu64
                " block%s found freed unseen when its address was reused\n",
                s->headerless_unseen_frees, hr_s(s->headerless_unseen_frees));
    fprintf(out, "  metadata     %s of %s budget", hr_format_bytes(a, s->metadata_bytes),
            hr_format_bytes(b, s->metadata_budget));
    if (s->metadata_resident) /* 0: not recorded in this profile */
        fprintf(out, " (%s in memory)", hr_format_bytes(a, s->metadata_resident));
    fprintf(out, ", bootstrap arena %s\n", hr_format_bytes(a, s->bootstrap_bytes));
    hr_text_access_totals(out, p);
    putc('\n', out);
}

static void hr_text_frame(FILE *out, uint32_t i, const struct hr_frame *f)
{
    fprintf(out, "      #%-2" PRIu32 " ", i);
    if (*f->function)
        hr_text_string(out, f->function, strlen(f->function));
    else
        fprintf(out, "0x%" PRIx64, f->pc);
    if (*f->file) {
        fputs(" (", out);
        hr_text_string(out, f->file, strlen(f->file));
        fprintf(out, ":%d)", f->line);
    }
    if (*f->module) {
        fputs(" [", out);
        hr_text_string(out, f->module, strlen(f->module));
        putc(']', out);
    }
    if (f->inlined)
        fputs(" (inlined)", out);
    putc('\n', out);
}

void hr_text_stack(FILE *out, const struct hr_context *c, struct hr_symbolizer *sym)
{
    fputs(c->depth ? "    stack\n" : "    stack      (none recorded)\n", out);
    uint32_t k = 0; /* frames shown: inlined functions get lines of their own */
    for (uint32_t i = 0; i < c->depth; i++) {
        struct hr_frame f;
        hr_symbolize(sym, c->pcs[i], &f);
        for (const struct hr_frame *g = &f; g; g = g->next)
            hr_text_frame(out, k++, g);
    }
    putc('\n', out);
}

/* Share of a whole, in percent; 0 when the whole is 0 (empty or hand-made profiles). */
static double hr_pct(uint64_t part, uint64_t whole)
{
    return whole ? 100.0 * (double)part / (double)whole : 0.0;
}

static void hr_text_context(FILE *out, size_t rank, const struct hr_profile *p,
                            const struct hr_context *c, struct hr_symbolizer *sym)
{
    const struct hpf_summary *sum = &p->summary;
    const struct hpf_hib *h = &c->hib;
    const struct hpf_live *l = &c->live;
    char a[HR_BYTES_MAX], b[HR_BYTES_MAX], m[HR_BYTES_MAX], x[HR_BYTES_MAX];
    int any = h->alloc_count > 0;
    /* Objects of the program's own pools (heapprof_pool_alloc) say so on the first line. */
    fprintf(out, "#%zu  context %" PRIu32 ": %" PRIu64 " %sallocation%s, %s (%.1f%% of all bytes)\n",
            rank, c->context_id, h->alloc_count, l->flags & HPF_LIVE_POOL ? "pool " : "",
            hr_s(h->alloc_count), hr_format_bytes(a, h->total_size),
            hr_pct(h->total_size, sum->total_bytes));
    double avg = hr_avg(h->total_size, h->alloc_count);
    if (avg < 1024) /* small sizes keep their fraction: 12.5 B is worth seeing */
        snprintf(b, sizeof b, "%.1f B", avg);
    else
        hr_format_bytes(b, (uint64_t)(avg + 0.5));
    fprintf(out, "    size       min %s, avg %s, max %s\n",
            hr_format_bytes(m, any ? h->min_size : 0), b, hr_format_bytes(x, h->max_size));
    fprintf(out, "    lifetime   min %" PRIu64 " ms, avg %.1f ms, max %" PRIu64 " ms\n",
            any ? h->min_lifetime_ms : 0, hr_avg(h->total_lifetime_ms, h->alloc_count),
            h->max_lifetime_ms);
    fprintf(out, "    leaked     %" PRIu64 " block%s, %s (own max %" PRIu64 " block%s, %s)\n",
            l->live_count, hr_s(l->live_count), hr_format_bytes(a, l->live_size),
            l->max_live_count, hr_s(l->max_live_count), hr_format_bytes(b, l->max_live_size));
    fprintf(out, "    at peak    %" PRIu64 " block%s, %s (%.1f%% of the peak heap)\n",
            l->peak_live_count, hr_s(l->peak_live_count), hr_format_bytes(a, l->peak_live_size),
            hr_pct(l->peak_live_size, sum->peak_live_size));
    fprintf(out, "    allocated  from %" PRIu64 " ms to %" PRIu64 " ms\n", l->first_alloc_ms,
            l->last_alloc_ms);
    fprintf(out,
            "    cpus       %" PRIu32 " migrated, %" PRIu32 " same alloc cpu, %" PRIu32
            " same free cpu, %" PRIu32 " lifetime overlap%s\n",
            h->num_migrated_cpu, h->num_same_alloc_cpu, h->num_same_dealloc_cpu,
            h->num_lifetime_overlaps, hr_s(h->num_lifetime_overlaps));
    hr_text_access_context(out, p, c);
    hr_text_stack(out, c, sym);
}

static int hr_text_profile(FILE *out, const struct hr_profile *p,
                           const struct hr_output_opts *opts)
{
    struct hr_context **order = hr_contexts_sorted(p, opts->sort);
    struct hr_symbolizer *sym = hr_symbolizer_new(p, opts->warn);
    if (!order || !sym) {
        free(order);
        hr_symbolizer_free(sym);
        return -1;
    }
    hr_text_header(out, p);
    hr_text_totals(out, p);
    hr_text_sources(out, p);
    if (p->diff_base) { /* what grew and what shrank instead of the top contexts */
        int d = hr_text_diff(out, p, order, opts, sym);
        hr_symbolizer_free(sym);
        free(order);
        return d;
    }
    int r = hr_text_sections(out, p, opts, sym);
    if (r == 0 && hr_section_on(opts, HR_SECTION_CONTEXTS)) {
        size_t shown = opts->top && opts->top < p->ncontexts ? opts->top : p->ncontexts;
        fprintf(out, "top %zu of %zu contexts by %s\n\n", shown, p->ncontexts,
                hr_sort_key_name(opts->sort));
        for (size_t i = 0; i < shown; i++)
            hr_text_context(out, i + 1, p, order[i], sym);
    }
    if (r == 0 && hr_section_on(opts, HR_SECTION_ACCESS))
        r = hr_text_access_views(out, p, opts->top, sym);
    hr_symbolizer_free(sym);
    free(order);
    return r;
}

int hr_write_text(FILE *out, struct hr_profile *const *profiles, size_t n,
                  const struct hr_output_opts *opts)
{
    for (size_t i = 0; i < n; i++) {
        if (i)
            fputs("\n", out);
        if (hr_text_profile(out, profiles[i], opts))
            return -1;
    }
    return 0;
}
