/* The access-profiling part of the JSON output (docs/FORMAT.md): the profile's "access" object
 * and each context's write/read counts, densities and histograms (per granule, per word). */
#include <inttypes.h>

#include "hr_output.h"
#include "json_internal.h"

/* A ratio as a JSON number: 9 significant digits, no "inf" or "nan" (callers pass finite
 * values; a negative one means "not known" and is written null). */
static void hr_json_ratio(FILE *out, const char *indent, const char *name, double v)
{
    if (v < 0)
        fprintf(out, "%s\"%s\": null,\n", indent, name);
    else
        fprintf(out, "%s\"%s\": %.9g,\n", indent, name, v);
}

/* n numbers, those of bins (have of them) then zeros, separated by ", ". */
static void hr_json_bins(FILE *out, const uint64_t *bins, uint32_t have, uint32_t n)
{
    for (uint32_t i = 0; i < n; i++)
        fprintf(out, "%s%" PRIu64, i ? ", " : "", i < have ? bins[i] : 0);
}

/* "access_word_histogram": accesses per 8-byte word of the context's small blocks (callback
 * builds), and per word how many blocks' counter saturated (their counts are lower bounds);
 * null when the context has none. */
static void hr_json_word_histogram(FILE *out, const char *indent, const struct hr_context *c)
{
    uint32_t n = c->word_bins > c->word_sat_bins ? c->word_bins : c->word_sat_bins;
    if (!n) {
        fprintf(out, "%s\"access_word_histogram\": null,\n", indent);
        return;
    }
    fprintf(out, "%s\"access_word_histogram\": {\"word\": 8, \"counts\": [", indent);
    hr_json_bins(out, c->word_hist, c->word_bins, n);
    fputs("], \"saturated_blocks\": [", out);
    hr_json_bins(out, c->word_sat, c->word_sat_bins, n);
    fputs("]},\n", out);
}

void hr_json_access_fields(FILE *out, const char *indent, const struct hr_context *c,
                           uint32_t granule)
{
    const struct hpf_hib *h = &c->hib;
    int any = h->alloc_count > 0;
    hr_json_u64(out, indent, "total_write_count", h->total_write_count, 0);
    hr_json_u64(out, indent, "min_write_count", any ? h->min_write_count : 0, 0);
    hr_json_u64(out, indent, "max_write_count", h->max_write_count, 0);
    hr_json_u64(out, indent, "total_read_count", hr_access_reads(h), 0);
    hr_json_ratio(out, indent, "access_density", hr_access_density(h));
    hr_json_ratio(out, indent, "access_density_per_s", hr_access_density_per_s(h));
    if (!c->hist_bins) {
        fprintf(out, "%s\"access_histogram\": null,\n", indent);
    } else {
        fprintf(out, "%s\"access_histogram\": {\"granule\": %" PRIu32 ", \"counts\": [",
                indent, granule);
        hr_json_bins(out, c->hist, c->hist_bins, c->hist_bins);
        fputs("]},\n", out);
    }
    hr_json_word_histogram(out, indent, c);
}

void hr_json_access(FILE *out, const struct hr_profile *p)
{
    const struct hr_access *a = &p->access;
    if (!a->present) {
        fputs("  \"access\": null,\n", out);
        return;
    }
    const char *in = "    ";
    const char *names[3];
    size_t n = hr_access_mode_names(a->rec.modes, names);
    fputs("  \"access\": {\n    \"modes\": [", out);
    for (size_t i = 0; i < n; i++) {
        fputs(i ? ", " : "", out);
        hr_json_string(out, names[i], hr_cstr(names[i]).len);
    }
    fprintf(out, "],\n%s\"reads_writes_apart\": %s,\n", in,
            hr_access_rw_apart(p) ? "true" : "false");
    fprintf(out, "%s\"abi_unknown\": %s,\n", in,
            a->rec.modes & HPF_ACCESS_ABI_UNKNOWN ? "true" : "false");
    hr_json_u64(out, in, "granule", a->rec.granule, 0);
    hr_json_u64(out, in, "histogram_granules", a->rec.hist_bins, 0);
    /* Per-word histograms: callback builds only; an inline module's accesses are missing from
     * them ("complete" false). */
    if (a->words.word)
        fprintf(out,
                "%s\"word_histograms\": {\"word\": %" PRIu32 ", \"max_size\": %" PRIu32
                ", \"counter_max\": %" PRIu32 ", \"complete\": %s},\n",
                in, a->words.word, a->words.max_size, a->words.counter_max,
                a->rec.modes & HPF_ACCESS_INLINE ? "false" : "true");
    else
        fprintf(out, "%s\"word_histograms\": null,\n", in);
    fputs("    \"instrumented_modules\": [", out);
    for (uint32_t i = 0; i < a->rec.nmodules; i++) {
        const struct hr_access_module *m = &a->modules[i];
        fputs(i ? ", " : "", out);
        if (m->path.ptr) {
            hr_json_string(out, m->path.ptr, m->path.len);
        } else {
            char addr[32];
            int len = snprintf(addr, sizeof addr, "0x%" PRIx64, m->addr);
            hr_json_string(out, addr, (size_t)len);
        }
    }
    fputs("]\n  },\n", out);
}
