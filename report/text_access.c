/* The access-profiling part of the text report: which modules were instrumented, each
 * context's accesses, reads and writes, utilisation, densities and histogram strip, and the
 * cold and hottest-per-byte views (docs/REPORT.md, "Access profiling"). */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "text_internal.h"

static const char *hr_mode_text(const char *name)
{
    if (strcmp(name, "inline") == 0)
        return "clang inline counters";
    if (strcmp(name, "callbacks") == 0)
        return "clang callbacks";
    return "gcc callbacks";
}

void hr_text_access_header(FILE *out, const struct hr_profile *p)
{
    const struct hr_access *a = &p->access;
    if (!a->present)
        return;
    const char *names[3];
    size_t n = hr_access_mode_names(a->rec.modes, names);
    fputs("  access       ", out);
    for (size_t i = 0; i < n; i++)
        fprintf(out, "%s%s", i ? " + " : "", hr_mode_text(names[i]));
    fprintf(out, "%s, %s", n ? "" : "no mode",
            hr_access_rw_apart(p) ? "reads and writes apart" : "reads and writes together");
    if (a->rec.modes & HPF_ACCESS_ABI_UNKNOWN)
        fputs(", COUNTS UNRELIABLE (a module built for an unknown MemProf ABI)", out);
    fprintf(out, "; histograms up to %" PRIu32 " granules of %" PRIu32 " B\n", a->rec.hist_bins,
            hr_access_granule(p));
    if (a->words.word)
        fprintf(out, "  words        per-%" PRIu32 "-byte-word histograms of blocks up to %" PRIu32
                     " B, counters saturating at %" PRIu32 " accesses a block%s\n",
                a->words.word, a->words.max_size, a->words.counter_max,
                a->rec.modes & HPF_ACCESS_INLINE ? " (without the inline modules' accesses)" : "");
    else
        fputs("  words        no per-word histograms (only callback builds count per word: "
              "heapprof-cc --callbacks, or gcc)\n", out);
    for (uint32_t i = 0; i < a->rec.nmodules; i++) {
        fputs(i ? "               " : "  instrumented ", out);
        if (a->modules[i].path.ptr)
            hr_text_string(out, a->modules[i].path.ptr, a->modules[i].path.len);
        else
            fprintf(out, "0x%" PRIx64 " (in no module of the profile)", a->modules[i].addr);
        putc('\n', out);
    }
    fputs("  (accesses are those of instrumented code only: libraries built without heapprof-cc "
          "and the kernel count none)\n", out);
}

void hr_text_access_totals(FILE *out, const struct hr_profile *p)
{
    if (!p->access.present)
        return;
    uint64_t acc = 0, wr = 0;
    for (size_t i = 0; i < p->ncontexts; i++) {
        acc += p->contexts[i].hib.total_access_count;
        wr += p->contexts[i].hib.total_write_count;
    }
    fprintf(out, "  accesses     %" PRIu64, acc);
    if (hr_access_rw_apart(p))
        fprintf(out, " (%" PRIu64 " reads, %" PRIu64 " writes)", acc > wr ? acc - wr : 0, wr);
    fputs(" to heap blocks\n", out);
    char a[HR_BYTES_MAX], b[HR_BYTES_MAX];
    fprintf(out, "  shadow       %s in memory", p->summary.shadow_resident
                                                   ? hr_format_bytes(a, p->summary.shadow_resident)
                                                   : "unknown");
    fprintf(out, ", live-block registry %s\n", hr_format_bytes(b, p->summary.shadow_registry_bytes));
}

/* A number in at most about 4 significant digits: "0", "0.0123", "1.25", "1234", "1.2e+06". */
static const char *hr_num(char buf[32], double v)
{
    snprintf(buf, 32, "%.3g", v);
    return buf;
}

/* Bins per column when a histogram is wider than the strip. */
#define HR_STRIP_MAX 64

/* The histogram as one character per bin (or per group of bins past HR_STRIP_MAX; unit names
 * them): '.' for none, then ":-=+*#%@" by the share of the largest bin, '@' the largest. */
static void hr_text_strip(FILE *out, const uint64_t *bins, uint32_t n, const char *unit)
{
    static const char ramp[] = ":-=+*#%@";
    uint32_t per = (n + HR_STRIP_MAX - 1) / HR_STRIP_MAX, cols = (n + per - 1) / per;
    uint64_t col[HR_STRIP_MAX], max = 0;
    for (uint32_t c = 0; c < cols; c++) {
        col[c] = 0;
        for (uint32_t i = c * per; i < n && i < (c + 1) * per; i++)
            col[c] = col[c] + bins[i] < col[c] ? UINT64_MAX : col[c] + bins[i];
        max = col[c] > max ? col[c] : max;
    }
    putc('|', out);
    for (uint32_t c = 0; c < cols; c++) {
        /* level 1..8 of the largest column, rounded up so any access shows */
        unsigned level = col[c] ? (unsigned)((long double)col[c] * 8 / max + 0.999999L) : 0;
        putc(level ? ramp[(level > 8 ? 8 : level) - 1] : '.', out);
    }
    putc('|', out);
    if (per > 1)
        fprintf(out, " (%" PRIu32 " %s a column)", per, unit);
}

static void hr_text_histogram(FILE *out, const struct hr_profile *p, const struct hr_context *c)
{
    uint32_t peak = 0, untouched = 0;
    for (uint32_t i = 0; i < c->hist_bins; i++) {
        peak = c->hist[i] > c->hist[peak] ? i : peak;
        untouched += c->hist[i] == 0;
    }
    fputs("    histogram  ", out);
    hr_text_strip(out, c->hist, c->hist_bins, "granules");
    fprintf(out, " %" PRIu32 " granule%s of %" PRIu32 " B, most %" PRIu64 " (granule %" PRIu32
                 "), %" PRIu32 " untouched\n",
            c->hist_bins, c->hist_bins == 1 ? "" : "s", hr_access_granule(p), c->hist[peak], peak,
            untouched);
}

/* Words listed with their counts up to this many (a struct of up to 256 bytes). */
#define HR_WORDS_LISTED 32

/* The per-word histogram: a strip, a summary, and the counts of the first words; '+' after a
 * count whose word saturated in some block (the count is then a lower bound). */
static void hr_text_words(FILE *out, const struct hr_context *c)
{
    uint32_t n = c->word_bins, peak = 0, untouched = 0, sat = 0;
    for (uint32_t i = 0; i < n; i++) {
        peak = c->word_hist[i] > c->word_hist[peak] ? i : peak;
        untouched += c->word_hist[i] == 0;
    }
    for (uint32_t i = 0; i < c->word_sat_bins; i++)
        sat += c->word_sat[i] != 0;
    fputs("    words      ", out);
    hr_text_strip(out, c->word_hist, n, "words");
    fprintf(out, " %" PRIu32 " word%s of 8 B, most %" PRIu64 " (word %" PRIu32 ", bytes %" PRIu32
                 "-%" PRIu32 "), %" PRIu32 " untouched",
            n, n == 1 ? "" : "s", c->word_hist[peak], peak, peak * 8, peak * 8 + 7, untouched);
    if (sat)
        fprintf(out, ", %" PRIu32 " saturated in some block (lower bounds)", sat);
    fputs("\n    per word  ", out);
    for (uint32_t i = 0; i < n && i < HR_WORDS_LISTED; i++)
        fprintf(out, " %" PRIu64 "%s", c->word_hist[i],
                i < c->word_sat_bins && c->word_sat[i] ? "+" : "");
    if (n > HR_WORDS_LISTED)
        fputs(" ...", out);
    putc('\n', out);
}

void hr_text_access_context(FILE *out, const struct hr_profile *p, const struct hr_context *c)
{
    if (!p->access.present)
        return;
    const struct hpf_hib *h = &c->hib;
    int any = h->alloc_count > 0;
    double n = any ? (double)h->alloc_count : 1.0;
    char d1[32], d2[32];
    fprintf(out, "    accesses   total %" PRIu64 ", per block min %" PRIu64 ", avg %.1f, max %" PRIu64
                 "\n",
            h->total_access_count, any ? h->min_access_count : 0,
            (double)h->total_access_count / n, h->max_access_count);
    if (hr_access_rw_apart(p) || h->total_write_count)
        fprintf(out, "    reads      total %" PRIu64 "; writes total %" PRIu64 ", per block min %" PRIu64
                     ", max %" PRIu64 "\n",
                hr_access_reads(h), h->total_write_count, any ? h->min_write_count : 0,
                h->max_write_count);
    fprintf(out, "    utilised   min %" PRIu32 "%%, avg %.1f%%, max %" PRIu32 "%% of the %" PRIu32
                 "-byte granules\n",
            any ? h->min_percent_utilized : 0, (double)h->total_percent_utilized / n,
            h->max_percent_utilized, hr_access_granule(p));
    double dps = hr_access_density_per_s(h);
    fprintf(out, "    density    %s accesses per byte, ", hr_num(d1, hr_access_density(h)));
    if (dps < 0)
        fputs("per byte per second unknown (lifetimes under the clock's tick)\n", out);
    else
        fprintf(out, "%s per byte per second of lifetime\n", hr_num(d2, dps));
    if (c->hist_bins)
        hr_text_histogram(out, p, c);
    if (c->word_bins)
        hr_text_words(out, c);
}

/* Frames a view line names: allocation wrappers (luaM_malloc_, xmalloc, a C++ allocator's
 * allocate) often make the innermost frame the same for many contexts. */
#define HR_SITE_FRAMES 3

void hr_text_site(FILE *out, const struct hr_context *c, struct hr_symbolizer *sym,
                  unsigned frames)
{
    if (!c->depth) {
        fputs("(no stack)", out);
        return;
    }
    unsigned shown = 0;
    for (uint32_t i = 0; i < c->depth && shown < frames; i++) {
        struct hr_frame f;
        hr_symbolize(sym, c->pcs[i], &f);
        for (const struct hr_frame *g = &f; g && shown < frames; g = g->next) {
            fputs(shown++ ? " < " : "", out);
            if (*g->function)
                hr_text_string(out, g->function, strlen(g->function));
            else
                fprintf(out, "0x%" PRIx64, g->pc);
            if (shown == 1 && *g->file) {
                fputs(" (", out);
                hr_text_string(out, g->file, strlen(g->file));
                fprintf(out, ":%d)", g->line);
            }
        }
    }
}

static void hr_text_cold_line(FILE *out, size_t rank, const struct hr_context *c,
                              struct hr_symbolizer *sym)
{
    const struct hpf_hib *h = &c->hib;
    char b[HR_BYTES_MAX], held[HR_BYTES_MAX], d[32];
    double dps = hr_access_density_per_s(h);
    double bs = hr_access_byte_seconds(h);
    fprintf(out, "  #%-2zu context %" PRIu32 ": %" PRIu64 " block%s of %s avg held %.1f s avg (%s-s), %" PRIu64
                 " accesses (%s per byte per second), utilised %.0f%%\n       ",
            rank, c->context_id, h->alloc_count, h->alloc_count == 1 ? "" : "s",
            hr_format_bytes(b, h->total_size / h->alloc_count),
            (double)h->total_lifetime_ms / (double)h->alloc_count / 1000.0,
            hr_format_bytes(held, bs < 1.8e19 ? (uint64_t)(bs + 0.5) : UINT64_MAX),
            h->total_access_count, hr_num(d, dps < 0 ? 0 : dps),
            (double)h->total_percent_utilized / (double)h->alloc_count);
    hr_text_site(out, c, sym, HR_SITE_FRAMES);
    putc('\n', out);
}

static void hr_text_hot_line(FILE *out, size_t rank, const struct hr_context *c,
                             struct hr_symbolizer *sym)
{
    const struct hpf_hib *h = &c->hib;
    char b[HR_BYTES_MAX], d[32];
    fprintf(out, "  #%-2zu context %" PRIu32 ": %s accesses per byte, %" PRIu64 " accesses to %s "
                 "in %" PRIu64 " block%s, utilised %.0f%%\n       ",
            rank, c->context_id, hr_num(d, hr_access_density(h)), h->total_access_count,
            hr_format_bytes(b, h->total_size), h->alloc_count, h->alloc_count == 1 ? "" : "s",
            h->alloc_count ? (double)h->total_percent_utilized / (double)h->alloc_count : 0.0);
    hr_text_site(out, c, sym, HR_SITE_FRAMES);
    putc('\n', out);
}

int hr_text_access_views(FILE *out, const struct hr_profile *p, size_t top,
                         struct hr_symbolizer *sym)
{
    if (!p->access.present)
        return 0;
    struct hr_context **v = malloc((p->ncontexts ? p->ncontexts : 1) * sizeof *v);
    if (!v)
        return -1;
    size_t max = top && top < HR_ACCESS_VIEW_MAX ? top : HR_ACCESS_VIEW_MAX;
    size_t n = hr_access_cold(p, v);
    fputs("cold allocations: held longest, accessed at under a tenth of the profile's rate per "
          "byte-second\n", out);
    if (!n)
        fputs("  (none)\n", out);
    for (size_t i = 0; i < n && i < max; i++)
        hr_text_cold_line(out, i + 1, v[i], sym);
    n = hr_access_hottest(p, v);
    fputs("\nhottest per byte: most accesses per allocated byte\n", out);
    if (!n)
        fputs("  (none: no access counted)\n", out);
    for (size_t i = 0; i < n && i < max; i++)
        hr_text_hot_line(out, i + 1, v[i], sym);
    putc('\n', out);
    free(v);
    return 0;
}
