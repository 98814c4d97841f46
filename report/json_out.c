/* The JSON output: one object per profile in the schema of docs/FORMAT.md ("JSON output").
 * Field names are those of shim/format/format.h so the two documents cannot drift apart. */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "hr_output.h"
#include "hr_symbolize.h"
#include "json_internal.h"

/* Version 1 repeated every frame in every context; 2 has the frame table. */
#define HR_JSON_SCHEMA_VERSION 2

size_t hr_json_dec(char *buf, uint64_t v)
{
    char tmp[20];
    size_t n = 0;
    do {
        tmp[n++] = (char)('0' + v % 10);
        v /= 10;
    } while (v);
    for (size_t i = 0; i < n; i++)
        buf[i] = tmp[n - 1 - i];
    return n;
}

/* Called some 50 times a context: one buffer and one unlocked write, not fprintf (which was
 * most of the time of a large profile's JSON). */
void hr_json_u64(FILE *out, const char *indent, const char *name, uint64_t v, int last)
{
    char line[160];
    size_t li = strlen(indent), ln = strlen(name);
    if (li + ln + 28 > sizeof line) {
        fprintf(out, "%s\"%s\": %" PRIu64 "%s\n", indent, name, v, last ? "" : ",");
        return;
    }
    char *p = line;
    memcpy(p, indent, li);
    p += li;
    *p++ = '"';
    memcpy(p, name, ln);
    p += ln;
    memcpy(p, "\": ", 3);
    p += 3;
    p += hr_json_dec(p, v);
    if (!last)
        *p++ = ',';
    *p++ = '\n';
    fwrite_unlocked(line, 1, (size_t)(p - line), out);
}

static void hr_json_strfield(FILE *out, const char *indent, const char *name, struct hr_str s,
                             int last)
{
    fprintf(out, "%s\"%s\": ", indent, name);
    hr_json_string(out, s.ptr ? s.ptr : "", s.len);
    fputs(last ? "\n" : ",\n", out);
}

struct hr_str hr_cstr(const char *s)
{
    size_t n = 0;
    while (s[n])
        n++;
    return (struct hr_str){s, (uint32_t)n};
}

const char *hr_json_reason_name(uint32_t r)
{
    switch (r) {
    case HPF_DUMP_EXIT: return "exit";
    case HPF_DUMP_API: return "api";
    case HPF_DUMP_SIGNAL: return "signal";
    case HPF_DUMP_INTERVAL: return "interval";
    case HPF_DUMP_KILLED: return "killed";
    case HPF_DUMP_CREDENTIALS: return "credentials";
    case HPF_DUMP_PEAK: return "peak";
    default: return "unknown";
    }
}

static const char *hr_unwinder_name(uint32_t u)
{
    switch (u) {
    case HPF_UNWIND_FP: return "fp";
    case HPF_UNWIND_LIBUNWIND: return "libunwind";
    case HPF_UNWIND_CFI: return "cfi";
    default: return "unknown";
    }
}

/* "truncated" and "cut": whether the profile was cut short, and what was read of it
 * (docs/FORMAT.md); a merged profile gives the positions in "merged_from". */
static void hr_json_cut(FILE *out, const struct hr_profile *p)
{
    const struct hr_cut *c = &p->cut;
    fprintf(out, "  \"truncated\": %s,\n", c->cut ? "true" : "false");
    if (!c->cut) {
        fputs("  \"cut\": null,\n", out);
        return;
    }
    fputs("  \"cut\": {\n", out);
    const char *in = "    ";
    hr_json_u64(out, in, "files", c->files, 0);
    if (!p->sources) {
        hr_json_u64(out, in, "file_size", c->size, 0);
        hr_json_u64(out, in, "complete_bytes", c->complete, 0);
        hr_json_u64(out, in, "records", c->records, 0);
    }
    hr_json_u64(out, in, "contexts_dropped", c->dropped_contexts, 0);
    fprintf(out, "%s\"summary_rebuilt\": %s\n  },\n", in, c->summary_rebuilt ? "true" : "false");
}

static void hr_json_process(FILE *out, const struct hr_profile *p)
{
    const struct hpf_process *pr = &p->process;
    const char *in = "    ";
    fputs("  \"process\": {\n", out);
    hr_json_u64(out, in, "pid", pr->pid, 0);
    hr_json_u64(out, in, "ppid", pr->ppid, 0);
    fputs("    \"command_line\": [", out);
    for (uint32_t i = 0; i < pr->argc; i++) {
        if (i)
            fputs(", ", out);
        hr_json_string(out, p->argv[i].ptr, p->argv[i].len);
    }
    fputs("],\n", out);
    hr_json_strfield(out, in, "executable", p->executable, 0);
    hr_json_u64(out, in, "start_time_unix_ns", pr->start_unix_ns, 0);
    hr_json_u64(out, in, "end_time_unix_ns", pr->dump_unix_ns, 0);
    hr_json_u64(out, in, "duration_ms", pr->dump_ms, 0);
    hr_json_strfield(out, in, "backend", p->backend, 0);
    hr_json_strfield(out, in, "allocator", p->allocator, 0);
    hr_json_strfield(out, in, "unwinder", hr_cstr(hr_unwinder_name(pr->unwinder)), 0);
    hr_json_u64(out, in, "stack_depth", pr->stack_depth, 0);
    hr_json_u64(out, in, "dump_seq", pr->dump_seq, 0);
    hr_json_strfield(out, in, "dump_reason", hr_cstr(hr_json_reason_name(pr->dump_reason)), 0);
    hr_json_u64(out, in, "forked_from", pr->forked_from, 1);
    fputs("  },\n", out);
}

void hr_json_summary(FILE *out, const char *indent, const struct hpf_summary *s)
{
    char in[16];
    snprintf(in, sizeof in, "%s  ", indent);
    fprintf(out, "%s\"summary\": {\n", indent);
    hr_json_u64(out, in, "total_allocs", s->total_allocs, 0);
    hr_json_u64(out, in, "total_frees", s->total_frees, 0);
    hr_json_u64(out, in, "total_bytes", s->total_bytes, 0);
    hr_json_u64(out, in, "live_count", s->live_count, 0);
    hr_json_u64(out, in, "live_size", s->live_size, 0);
    hr_json_u64(out, in, "peak_live_size", s->peak_live_size, 0);
    hr_json_u64(out, in, "peak_live_count", s->peak_live_count, 0);
    hr_json_u64(out, in, "peak_ms", s->peak_ms, 0);
    hr_json_u64(out, in, "peak_slack_bytes", s->peak_slack_bytes, 0);
    hr_json_u64(out, in, "contexts", s->contexts, 0);
    hr_json_u64(out, in, "unprofiled_allocs", s->unprofiled_allocs, 0);
    hr_json_u64(out, in, "evicted_hibs", s->evicted_hibs, 0);
    hr_json_u64(out, in, "foreign_frees", s->foreign_frees, 0);
    hr_json_u64(out, in, "double_frees", s->double_frees, 0);
    hr_json_u64(out, in, "bootstrap_bytes", s->bootstrap_bytes, 0);
    hr_json_u64(out, in, "metadata_bytes", s->metadata_bytes, 0);
    hr_json_u64(out, in, "metadata_budget", s->metadata_budget, 0);
    hr_json_u64(out, in, "truncated_stacks", s->truncated_stacks, 0);
    hr_json_u64(out, in, "killed_by", s->killed_by, 0);
    hr_json_u64(out, in, "metadata_resident", s->metadata_resident, 0);
    hr_json_u64(out, in, "shadow_resident", s->shadow_resident, 0);
    hr_json_u64(out, in, "shadow_registry_bytes", s->shadow_registry_bytes, 0);
    hr_json_u64(out, in, "pool_unknown_frees", s->pool_unknown_frees, 0);
    hr_json_u64(out, in, "pool_dropped", s->pool_dropped, 0);
    hr_json_u64(out, in, "headerless", s->headerless, 0);
    hr_json_u64(out, in, "headerless_unseen_frees", s->headerless_unseen_frees, 1);
    fprintf(out, "%s},\n", indent);
}

static void hr_json_context(FILE *out, const struct hr_profile *p, const struct hr_context *c,
                            const struct hr_json_ftab *ftab)
{
    const struct hpf_hib *h = &c->hib;
    const struct hpf_live *l = &c->live;
    const char *in = "      ";
    /* A context that saw no block has no minimum; print 0 rather than whatever was stored. */
    int any = h->alloc_count > 0;
    fputs("    {\n", out);
    hr_json_u64(out, in, "context_id", c->context_id, 0);
    hr_json_u64(out, in, "alloc_count", h->alloc_count, 0);
    hr_json_u64(out, in, "total_size", h->total_size, 0);
    hr_json_u64(out, in, "min_size", any ? h->min_size : 0, 0);
    hr_json_u64(out, in, "max_size", h->max_size, 0);
    hr_json_u64(out, in, "total_lifetime_ms", h->total_lifetime_ms, 0);
    hr_json_u64(out, in, "min_lifetime_ms", any ? h->min_lifetime_ms : 0, 0);
    hr_json_u64(out, in, "max_lifetime_ms", h->max_lifetime_ms, 0);
    hr_json_u64(out, in, "total_access_count", h->total_access_count, 0);
    hr_json_u64(out, in, "min_access_count", any ? h->min_access_count : 0, 0);
    hr_json_u64(out, in, "max_access_count", h->max_access_count, 0);
    hr_json_u64(out, in, "total_percent_utilized", h->total_percent_utilized, 0);
    hr_json_u64(out, in, "min_percent_utilized", any ? h->min_percent_utilized : 0, 0);
    hr_json_u64(out, in, "max_percent_utilized", h->max_percent_utilized, 0);
    hr_json_access_fields(out, in, c, hr_access_granule(p));
    hr_json_u64(out, in, "alloc_timestamp_ms", h->alloc_timestamp_ms, 0);
    hr_json_u64(out, in, "dealloc_timestamp_ms", h->dealloc_timestamp_ms, 0);
    hr_json_u64(out, in, "alloc_cpu_id", h->alloc_cpu_id, 0);
    hr_json_u64(out, in, "dealloc_cpu_id", h->dealloc_cpu_id, 0);
    hr_json_u64(out, in, "num_migrated_cpu", h->num_migrated_cpu, 0);
    hr_json_u64(out, in, "num_lifetime_overlaps", h->num_lifetime_overlaps, 0);
    hr_json_u64(out, in, "num_same_alloc_cpu", h->num_same_alloc_cpu, 0);
    hr_json_u64(out, in, "num_same_dealloc_cpu", h->num_same_dealloc_cpu, 0);
    hr_json_u64(out, in, "allocs", l->allocs, 0);
    hr_json_u64(out, in, "bytes", l->bytes, 0);
    hr_json_u64(out, in, "live_count", l->live_count, 0);
    hr_json_u64(out, in, "live_size", l->live_size, 0);
    hr_json_u64(out, in, "max_live_count", l->max_live_count, 0);
    hr_json_u64(out, in, "max_live_size", l->max_live_size, 0);
    hr_json_u64(out, in, "peak_live_count", l->peak_live_count, 0);
    hr_json_u64(out, in, "peak_live_size", l->peak_live_size, 0);
    hr_json_u64(out, in, "first_alloc_ms", l->first_alloc_ms, 0);
    hr_json_u64(out, in, "last_alloc_ms", l->last_alloc_ms, 0);
    /* Objects of the program's own pools (heapprof_pool_alloc), not blocks of its allocator. */
    fprintf(out, "%s\"pool\": %s,\n", in, l->flags & HPF_LIVE_POOL ? "true" : "false");
    hr_json_context_delta(out, in, p, c);
    fputs("      \"frames\": ", out);
    hr_json_ftab_refs(out, ftab, c);
    fputs("\n", out);
    fputs("    }", out);
}

static int hr_json_profile(FILE *out, const struct hr_profile *p,
                           const struct hr_output_opts *opts)
{
    struct hr_context **order = hr_contexts_sorted(p, opts->sort);
    struct hr_symbolizer *sym = hr_symbolizer_new(p, opts->warn);
    if (!order || !sym) {
        free(order);
        hr_symbolizer_free(sym);
        return -1;
    }
    size_t n = p->ncontexts;
    if (opts->json_top && opts->json_top < n)
        n = opts->json_top; /* the first by --sort; summary.contexts still counts them all */
    fprintf(out, "{\n  \"schema_version\": %d,\n  \"file\": ", HR_JSON_SCHEMA_VERSION);
    hr_json_string(out, p->path, hr_cstr(p->path).len);
    fputs(",\n", out);
    hr_json_cut(out, p);
    hr_json_process(out, p);
    hr_json_summary(out, "  ", &p->summary);
    hr_json_access(out, p);
    hr_json_sources(out, p);
    hr_json_diff_base(out, p);
    struct hr_json_ftab *ftab = hr_json_ftab_write(out, order, n, sym);
    if (!ftab) {
        hr_symbolizer_free(sym);
        free(order);
        return -1;
    }
    fputs("  \"contexts\": [", out);
    for (size_t i = 0; i < n; i++) {
        fputs(i ? ",\n" : "\n", out);
        hr_json_context(out, p, order[i], ftab);
    }
    fputs(n ? "\n  ]\n}" : "]\n}", out);
    hr_json_ftab_free(ftab);
    hr_symbolizer_free(sym);
    free(order);
    return 0;
}

int hr_write_json(FILE *out, struct hr_profile *const *profiles, size_t n,
                  const struct hr_output_opts *opts)
{
    int many = n != 1;
    if (many)
        fputs("[", out);
    for (size_t i = 0; i < n; i++) {
        if (many)
            fputs(i ? ",\n" : "\n", out);
        if (hr_json_profile(out, profiles[i], opts))
            return -1;
    }
    fputs(many ? "\n]\n" : "\n", out);
    return 0;
}
