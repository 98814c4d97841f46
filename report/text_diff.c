/* The text report of merged and diff profiles: which inputs a merge took, and for --diff what
 * grew and what shrank against the base, each context with its change and its stack. */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "hr_metric.h"
#include "text_internal.h"

static const char *hr_reason_word(uint32_t r)
{
    switch (r) {
    case HPF_DUMP_EXIT: return "exit";
    case HPF_DUMP_API: return "heapprof_dump()";
    case HPF_DUMP_SIGNAL: return "signal";
    case HPF_DUMP_INTERVAL: return "interval";
    case HPF_DUMP_KILLED: return "killed";
    case HPF_DUMP_PEAK: return "peak";
    case HPF_DUMP_CREDENTIALS: return "credentials";
    default: return "unknown";
    }
}

void hr_text_sources(FILE *out, const struct hr_profile *p)
{
    if (p->nsources < 2) /* a diff's single new profile: the header names it */
        return;
    size_t used = 0;
    for (size_t i = 0; i < p->nsources; i++)
        used += p->sources[i].used;
    fprintf(out, "merged from %zu profile%s (%zu used; a later dump of the same process "
                 "supersedes an earlier one)\n",
            p->nsources, p->nsources == 1 ? "" : "s", used);
    for (size_t i = 0; i < p->nsources; i++) {
        const struct hr_source *s = &p->sources[i];
        fputs("  ", out);
        hr_text_string(out, s->path, strlen(s->path));
        fprintf(out, "  pid %" PRIu32 ", dump #%" PRIu32 " (%s)", s->process.pid,
                s->process.dump_seq, hr_reason_word(s->process.dump_reason));
        if (!s->used) {
            fputs(", superseded by ", out);
            const char *by = p->sources[s->superseded_by].path;
            hr_text_string(out, by, strlen(by));
        }
        putc('\n', out);
    }
    putc('\n', out);
}

/* "+1.5 KiB", "-512 B", "+0 B". */
static char *hr_signed_bytes(char *buf, int64_t v)
{
    char b[HR_BYTES_MAX];
    uint64_t mag = v < 0 ? (uint64_t)0 - (uint64_t)v : (uint64_t)v;
    snprintf(buf, HR_BYTES_MAX + 1, "%c%s", v < 0 ? '-' : '+', hr_format_bytes(b, mag));
    return buf;
}

static void hr_text_diff_totals(FILE *out, const struct hr_profile *p)
{
    const struct hpf_summary *n = &p->summary, *b = &p->diff_base->summary;
    char x[HR_BYTES_MAX + 1], y[HR_BYTES_MAX + 1], z[HR_BYTES_MAX + 1];
    size_t both = 0, only_new = 0, only_base = 0;
    for (size_t i = 0; i < p->ncontexts; i++) {
        const struct hr_context *c = &p->contexts[i];
        if (!c->base)
            only_new++;
        else if (!c->has_hib && !c->has_live)
            only_base++;
        else
            both++;
    }
    fputs("diff against ", out);
    hr_text_string(out, p->diff_base->path, strlen(p->diff_base->path));
    fprintf(out, " (pid %" PRIu32 "): this profile minus the base\n", p->diff_base->process.pid);
    fprintf(out, "  allocations  %+" PRId64 " (%s requested)\n",
            (int64_t)(n->total_allocs - b->total_allocs),
            hr_signed_bytes(x, (int64_t)(n->total_bytes - b->total_bytes)));
    fprintf(out, "  peak heap    %s, leaked %s, in use at the dump %+" PRId64 " block%s\n",
            hr_signed_bytes(y, (int64_t)(n->peak_live_size - b->peak_live_size)),
            hr_signed_bytes(z, (int64_t)(n->live_size - b->live_size)),
            (int64_t)(n->live_count - b->live_count), n->live_count - b->live_count == 1 ? "" : "s");
    fprintf(out, "  contexts     %zu in both, %zu only in this profile, %zu only in the base\n\n",
            both, only_new, only_base);
}

/* The key's figure as the text shows it: bytes for sizes, a plain number otherwise. */
static void hr_key_text(FILE *out, enum hr_sort_key key, double v)
{
    char b[HR_BYTES_MAX + 1];
    switch (key) {
    case HR_SORT_TOTAL_SIZE:
    case HR_SORT_LIVE_SIZE:
    case HR_SORT_PEAK_LIVE_SIZE:
    case HR_SORT_MAX_LIVE_SIZE: fputs(hr_signed_bytes(b, (int64_t)v), out); return;
    case HR_SORT_ACCESS_DENSITY: fprintf(out, "%+.3g", v); return;
    default: fprintf(out, "%+.0f", v); return;
    }
}

static void hr_text_diff_context(FILE *out, size_t rank, const struct hr_profile *p,
                                 const struct hr_context *c, enum hr_sort_key key,
                                 struct hr_symbolizer *sym)
{
    char a[HR_BYTES_MAX + 1], b[HR_BYTES_MAX + 1], d[HR_BYTES_MAX + 1];
    const char *tag = !c->base ? " (new)" : !c->has_hib && !c->has_live ? " (gone)" : "";
    fprintf(out, "#%zu  context %" PRIu32 "%s: ", rank, c->context_id, tag);
    hr_key_text(out, key, hr_sort_key_change(c, key));
    fprintf(out, " %s\n", hr_sort_key_name(key));
    fprintf(out, "    allocated  %s in %+" PRId64 " allocations (now %" PRIu64 ", base %" PRIu64
                 ")\n",
            hr_signed_bytes(a, hr_metric_value(p, c, HR_METRIC_ALLOC_BYTES)),
            hr_metric_value(p, c, HR_METRIC_ALLOC_COUNT), hr_metric_raw(c, HR_METRIC_ALLOC_COUNT),
            c->base ? hr_metric_raw(c->base, HR_METRIC_ALLOC_COUNT) : 0);
    fprintf(out, "    at peak    %s, leaked %s (%+" PRId64 " blocks), lifetimes %+" PRId64
                 " ms\n",
            hr_signed_bytes(b, hr_metric_value(p, c, HR_METRIC_PEAK_BYTES)),
            hr_signed_bytes(d, hr_metric_value(p, c, HR_METRIC_INUSE_BYTES)),
            hr_metric_value(p, c, HR_METRIC_INUSE_COUNT),
            hr_metric_value(p, c, HR_METRIC_LIFETIME_MS));
    hr_text_stack(out, c, sym);
}

/* One section: the contexts whose change has the given sign, largest change first. */
static void hr_text_diff_section(FILE *out, const struct hr_profile *p, struct hr_context **order,
                                 int sign, const struct hr_output_opts *opts,
                                 struct hr_symbolizer *sym)
{
    size_t n = 0;
    for (size_t i = 0; i < p->ncontexts; i++) {
        double ch = hr_sort_key_change(order[i], opts->sort);
        n += sign > 0 ? ch > 0 : ch < 0;
    }
    size_t shown = opts->top && opts->top < n ? opts->top : n;
    fprintf(out, "%s: top %zu of %zu contexts by %s change\n\n", sign > 0 ? "grew" : "shrank",
            shown, n, hr_sort_key_name(opts->sort));
    for (size_t i = 0, k = 0; i < p->ncontexts && k < shown; i++) {
        double ch = hr_sort_key_change(order[i], opts->sort);
        if (sign > 0 ? ch > 0 : ch < 0)
            hr_text_diff_context(out, ++k, p, order[i], opts->sort, sym);
    }
}

int hr_text_diff(FILE *out, const struct hr_profile *p, struct hr_context **order,
                 const struct hr_output_opts *opts, struct hr_symbolizer *sym)
{
    hr_text_diff_totals(out, p);
    hr_text_diff_section(out, p, order, 1, opts, sym);
    hr_text_diff_section(out, p, order, -1, opts, sym);
    return 0;
}
