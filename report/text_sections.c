/* The sections of the text report a person scans first, between the totals and the context
 * listing: the top contexts by bytes, allocations, peak and leaked bytes, the temporary
 * allocations, and the block sizes in power-of-two buckets (docs/REPORT.md, "Text sections"). */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "text_internal.h"

/* The names --sections takes, in the order the report prints them. */
static const char *const hr_section_names[] = {
    "bytes", "count", "peak", "leaked", "temporary", "sizes", "contexts", "access",
};
#define HR_NSECTIONS (sizeof hr_section_names / sizeof hr_section_names[0])

int hr_sections_parse(const char *list, unsigned *off)
{
    unsigned on = 0;
    const char *s = list;
    while (*s) {
        size_t n = strcspn(s, ",");
        size_t i = 0;
        if (n == 3 && strncmp(s, "all", 3) == 0)
            on = ~0u;
        else if (n == 4 && strncmp(s, "none", 4) == 0)
            on = 0;
        else {
            while (i < HR_NSECTIONS && !(strlen(hr_section_names[i]) == n &&
                                         strncmp(s, hr_section_names[i], n) == 0))
                i++;
            if (i == HR_NSECTIONS)
                return -1;
            on |= 1u << i;
        }
        s += n;
        if (*s == ',' && *++s == 0)
            return -1; /* a trailing comma: a name went missing */
    }
    if (s == list)
        return -1;
    *off = ~on;
    return 0;
}

/* avg of a total over a count, 0 for no count. */
static double hr_avg(uint64_t total, uint64_t count)
{
    return count ? (double)total / (double)count : 0.0;
}

static double hr_pct(uint64_t part, uint64_t whole)
{
    return whole ? 100.0 * (double)part / (double)whole : 0.0;
}

static const char *hr_s(uint64_t n) { return n == 1 ? "" : "s"; }

/* A size with its fraction below 1 KiB ("12.5 B"), else as hr_format_bytes. */
static char *hr_avg_bytes(char buf[HR_BYTES_MAX], double v)
{
    if (v < 1024)
        snprintf(buf, HR_BYTES_MAX, "%.1f B", v);
    else
        hr_format_bytes(buf, v < 1.8e19 ? (uint64_t)(v + 0.5) : UINT64_MAX);
    return buf;
}

/* The HIB figures and the allocation site of one entry, under its first line. */
static void hr_section_details(FILE *out, const struct hr_context *c, struct hr_symbolizer *sym)
{
    const struct hpf_hib *h = &c->hib;
    int any = h->alloc_count > 0;
    char m[HR_BYTES_MAX], a[HR_BYTES_MAX], x[HR_BYTES_MAX];
    fprintf(out, "        size min %s, avg %s, max %s; lifetime min %" PRIu64 " ms, avg %.1f ms, "
                 "max %" PRIu64 " ms\n        at ",
            hr_format_bytes(m, any ? h->min_size : 0),
            hr_avg_bytes(a, hr_avg(h->total_size, h->alloc_count)),
            hr_format_bytes(x, h->max_size), any ? h->min_lifetime_ms : 0,
            hr_avg(h->total_lifetime_ms, h->alloc_count), h->max_lifetime_ms);
    hr_text_site(out, c, sym, HR_SECTION_FRAMES);
    putc('\n', out);
}

/* The first line of an entry of a top-N section: its figure and share, then the context. */
static void hr_section_line(FILE *out, size_t rank, const struct hr_profile *p,
                            const struct hr_context *c, enum hr_sort_key key)
{
    const struct hpf_summary *s = &p->summary;
    const struct hpf_hib *h = &c->hib;
    const struct hpf_live *l = &c->live;
    char a[HR_BYTES_MAX];
    fprintf(out, "  #%-2zu ", rank);
    switch (key) {
    case HR_SORT_ALLOC_COUNT:
        fprintf(out, "%" PRIu64 " allocation%s (%.1f%% of all), %s", h->alloc_count,
                hr_s(h->alloc_count), hr_pct(h->alloc_count, s->total_allocs),
                hr_format_bytes(a, h->total_size));
        break;
    case HR_SORT_PEAK_LIVE_SIZE:
        fprintf(out, "%s (%.1f%% of the peak heap) in %" PRIu64 " block%s",
                hr_format_bytes(a, l->peak_live_size), hr_pct(l->peak_live_size, s->peak_live_size),
                l->peak_live_count, hr_s(l->peak_live_count));
        break;
    case HR_SORT_LIVE_SIZE:
        fprintf(out, "%s (%.1f%% of all leaked) in %" PRIu64 " block%s",
                hr_format_bytes(a, l->live_size), hr_pct(l->live_size, s->live_size),
                l->live_count, hr_s(l->live_count));
        break;
    default:
        fprintf(out, "%s (%.1f%% of all bytes) in %" PRIu64 " allocation%s",
                hr_format_bytes(a, h->total_size), hr_pct(h->total_size, s->total_bytes),
                h->alloc_count, hr_s(h->alloc_count));
        break;
    }
    fprintf(out, ", context %" PRIu32 "\n", c->context_id);
}

static uint64_t hr_section_figure(const struct hr_context *c, enum hr_sort_key key)
{
    switch (key) {
    case HR_SORT_ALLOC_COUNT: return c->hib.alloc_count;
    case HR_SORT_PEAK_LIVE_SIZE: return c->live.peak_live_size;
    case HR_SORT_LIVE_SIZE: return c->live.live_size;
    default: return c->hib.total_size;
    }
}

/* One top-N section: the contexts with the largest figure of key, those with 0 left out. */
static int hr_section_top(FILE *out, const struct hr_profile *p, const char *title,
                          enum hr_sort_key key, size_t max, struct hr_symbolizer *sym)
{
    struct hr_context **v = hr_contexts_sorted(p, key);
    if (!v)
        return -1;
    fprintf(out, "%s\n", title);
    size_t n = 0;
    for (; n < max && n < p->ncontexts && hr_section_figure(v[n], key); n++) {
        hr_section_line(out, n + 1, p, v[n], key);
        hr_section_details(out, v[n], sym);
    }
    if (!n)
        fputs("  (none)\n", out);
    putc('\n', out);
    free(v);
    return 0;
}

/* Temporary: a context whose blocks were all freed, and lived under 1 ms on average. The
 * shim's clock ticks every few milliseconds (docs/FORMAT.md), so blocks freed at once show 0 ms
 * and the rare one that straddles a tick shows one tick: an average under 1 ms means nearly all
 * died within their tick. A block still live at the dump (a buffer allocated just before the
 * exit) is no temporary one, however young. */
static int hr_is_temporary(const struct hr_context *c)
{
    return c->hib.alloc_count && c->hib.total_lifetime_ms < c->hib.alloc_count &&
           c->live.live_count == 0;
}

static int hr_section_temporary(FILE *out, const struct hr_profile *p, size_t max,
                                struct hr_symbolizer *sym)
{
    struct hr_context **v = hr_contexts_sorted(p, HR_SORT_ALLOC_COUNT);
    if (!v)
        return -1;
    uint64_t allocs = 0, bytes = 0, ctxs = 0;
    for (size_t i = 0; i < p->ncontexts; i++) {
        if (hr_is_temporary(v[i])) {
            allocs += v[i]->hib.alloc_count;
            bytes += v[i]->hib.total_size;
            ctxs++;
        }
    }
    char a[HR_BYTES_MAX];
    fprintf(out, "temporary allocations: %" PRIu64 " allocation%s (%.1f%% of all), %s, from %" PRIu64
                 " context%s whose blocks lived under 1 ms on average\n",
            allocs, hr_s(allocs), hr_pct(allocs, p->summary.total_allocs),
            hr_format_bytes(a, bytes), ctxs, hr_s(ctxs));
    size_t n = 0;
    for (size_t i = 0; i < p->ncontexts && n < max; i++) {
        if (!hr_is_temporary(v[i]))
            continue;
        hr_section_line(out, ++n, p, v[i], HR_SORT_ALLOC_COUNT);
        hr_section_details(out, v[i], sym);
    }
    putc('\n', out);
    free(v);
    return 0;
}

/* The bucket of a block size: 0 for 0 bytes, b for [2^(b-1), 2^b). */
static unsigned hr_bucket(uint64_t size)
{
    return size ? 64 - (unsigned)__builtin_clzll(size) : 0;
}

/* A bucket's bounds as "[8 B, 16 B)": powers of two, so the units need no decimals. */
static void hr_bucket_label(char *buf, size_t len, unsigned b)
{
    static const char *const units[] = {"B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"};
    if (b == 0) {
        snprintf(buf, len, "0 B");
        return;
    }
    unsigned lo = b - 1, hi = b; /* log2 of the bounds */
    snprintf(buf, len, "[%llu %s, %llu %s)", 1ull << (lo % 10), units[lo / 10],
             1ull << (hi % 10), units[hi / 10]);
}

struct hr_sizes {
    uint64_t count[65], bytes[65];
    uint64_t spread; /* contexts whose middle blocks were placed at their average size */
};

/* Each context's blocks into the buckets: its smallest and largest block where they belong,
 * the others (which the HIB does not tell apart) at their average size. Exact for contexts of
 * one size or of one or two blocks. */
static void hr_sizes_add(struct hr_sizes *z, const struct hpf_hib *h)
{
    if (!h->alloc_count)
        return;
    unsigned bmin = hr_bucket(h->min_size), bmax = hr_bucket(h->max_size);
    if (bmin == bmax) {
        z->count[bmin] += h->alloc_count;
        z->bytes[bmin] += h->total_size;
        return;
    }
    uint64_t ends = h->min_size + h->max_size;
    if (h->alloc_count < 2 || ends < h->min_size || h->total_size < ends) {
        /* figures that do not add up (a damaged profile): all at the average */
        unsigned b = hr_bucket(h->total_size / h->alloc_count);
        z->count[b] += h->alloc_count;
        z->bytes[b] += h->total_size;
        return;
    }
    z->count[bmin]++;
    z->bytes[bmin] += h->min_size;
    z->count[bmax]++;
    z->bytes[bmax] += h->max_size;
    uint64_t rest = h->alloc_count - 2;
    if (rest) {
        unsigned b = hr_bucket((h->total_size - ends) / rest);
        z->count[b] += rest;
        z->bytes[b] += h->total_size - ends;
        z->spread++;
    }
}

/* Width of the largest bar of the sizes section. */
#define HR_BAR_MAX 40

static void hr_section_sizes(FILE *out, const struct hr_profile *p)
{
    struct hr_sizes z;
    memset(&z, 0, sizeof z);
    for (size_t i = 0; i < p->ncontexts; i++)
        hr_sizes_add(&z, &p->contexts[i].hib);
    unsigned first = 65, last = 0;
    uint64_t total = 0, max = 0;
    for (unsigned b = 0; b < 65; b++) {
        if (!z.count[b])
            continue;
        first = b < first ? b : first;
        last = b;
        total += z.count[b];
        max = z.count[b] > max ? z.count[b] : max;
    }
    fputs("allocation sizes: blocks by requested size, in power-of-two buckets\n", out);
    if (first == 65) {
        fputs("  (none)\n\n", out);
        return;
    }
    fprintf(out, "  %-22s %12s %7s %11s\n", "size", "allocations", "", "bytes");
    for (unsigned b = first; b <= last; b++) {
        char label[48], by[HR_BYTES_MAX];
        hr_bucket_label(label, sizeof label, b);
        fprintf(out, "  %-22s %12" PRIu64 " %6.1f%% %11s", label, z.count[b],
                hr_pct(z.count[b], total), hr_format_bytes(by, z.bytes[b]));
        /* rounded up, so that a bucket with any block shows */
        unsigned bar = (unsigned)(((long double)z.count[b] * HR_BAR_MAX + max - 1) / max);
        if (bar)
            fputs("  ", out);
        for (unsigned i = 0; i < bar; i++)
            putc('#', out);
        putc('\n', out);
    }
    if (z.spread)
        fprintf(out, "  (%" PRIu64 " context%s had blocks of several sizes besides the smallest "
                     "and largest: those are counted at their average size)\n",
                z.spread, hr_s(z.spread));
    putc('\n', out);
}

int hr_text_sections(FILE *out, const struct hr_profile *p, const struct hr_output_opts *opts,
                     struct hr_symbolizer *sym)
{
    static const struct {
        unsigned bit;
        enum hr_sort_key key;
        const char *title;
    } tops[] = {
        {HR_SECTION_BYTES, HR_SORT_TOTAL_SIZE, "top contexts by bytes allocated"},
        {HR_SECTION_COUNT, HR_SORT_ALLOC_COUNT, "top contexts by allocations"},
        {HR_SECTION_PEAK, HR_SORT_PEAK_LIVE_SIZE, "top contexts by bytes live at the peak"},
        {HR_SECTION_LEAKED, HR_SORT_LIVE_SIZE, "top contexts by leaked bytes (live at the dump)"},
    };
    size_t max = opts->top && opts->top < HR_SECTION_MAX ? opts->top : HR_SECTION_MAX;
    for (size_t i = 0; i < sizeof tops / sizeof tops[0]; i++)
        if (hr_section_on(opts, tops[i].bit) &&
            hr_section_top(out, p, tops[i].title, tops[i].key, max, sym))
            return -1;
    if (hr_section_on(opts, HR_SECTION_TEMPORARY) && hr_section_temporary(out, p, max, sym))
        return -1;
    if (hr_section_on(opts, HR_SECTION_SIZES))
        hr_section_sizes(out, p);
    return 0;
}
