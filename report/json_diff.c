/* The JSON members of merged and diff profiles (docs/FORMAT.md, "JSON output"): the inputs of
 * a merge, the base of a diff, and each context's change against the base. */
#include <inttypes.h>

#include "hr_metric.h"
#include "hr_output.h"
#include "json_internal.h"

void hr_json_sources(FILE *out, const struct hr_profile *p)
{
    if (!p->sources) {
        fputs("  \"merged_from\": null,\n", out);
        return;
    }
    fputs("  \"merged_from\": [", out);
    for (size_t i = 0; i < p->nsources; i++) {
        const struct hr_source *s = &p->sources[i];
        fputs(i ? ",\n    {\"file\": " : "\n    {\"file\": ", out);
        hr_json_string(out, s->path, hr_cstr(s->path).len);
        fprintf(out,
                ", \"pid\": %" PRIu32 ", \"start_time_unix_ns\": %" PRIu64
                ", \"dump_seq\": %" PRIu32 ", \"dump_reason\": \"%s\", \"used\": %s, "
                "\"superseded_by\": ",
                s->process.pid, s->process.start_unix_ns, s->process.dump_seq,
                hr_json_reason_name(s->process.dump_reason), s->used ? "true" : "false");
        if (s->used)
            fputs("null", out);
        else
            fprintf(out, "%d", s->superseded_by);
        fprintf(out, ", \"truncated\": %s", s->cut ? "true" : "false");
        if (s->cut)
            fprintf(out, ", \"file_size\": %" PRIu64, s->cut_size);
        fputs("}", out);
    }
    fputs(p->nsources ? "\n  ],\n" : "],\n", out);
}

void hr_json_diff_base(FILE *out, const struct hr_profile *p)
{
    const struct hr_profile *b = p->diff_base;
    if (!b) {
        fputs("  \"diff_base\": null,\n", out);
        return;
    }
    fputs("  \"diff_base\": {\n    \"file\": ", out);
    hr_json_string(out, b->path, hr_cstr(b->path).len);
    fprintf(out, ",\n    \"pid\": %" PRIu32 ",\n    \"truncated\": %s,\n", b->process.pid,
            b->cut.cut ? "true" : "false");
    hr_json_summary(out, "    ", &b->summary);
    size_t only = 0;
    for (size_t i = 0; i < p->ncontexts; i++)
        only += p->contexts[i].base && !p->contexts[i].has_hib && !p->contexts[i].has_live;
    fprintf(out, "    \"contexts\": %zu,\n    \"contexts_only_in_base\": %zu\n  },\n",
            b->ncontexts, only);
}

void hr_json_context_delta(FILE *out, const char *indent, const struct hr_profile *p,
                           const struct hr_context *c)
{
    if (!p->diff_base)
        return;
    fprintf(out, "%s\"in_base\": %s,\n%s\"delta\": {", indent, c->base ? "true" : "false",
            indent);
    for (int m = 0; m < HR_METRIC_COUNT_; m++)
        fprintf(out, "%s\"%s\": %" PRId64, m ? ", " : "", hr_metric_name((enum hr_metric)m),
                hr_metric_value(p, c, (enum hr_metric)m));
    fputs("},\n", out);
}
