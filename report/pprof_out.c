/* The pprof output: one profile as a gzipped perftools.profiles.Profile (pprof's
 * profile.proto), a sample per context with the figures of hr_metric.h as its values, so
 * `go tool pprof`, Pyroscope and Parca read heapprof profiles (docs/REPORT.md, "pprof"). */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "hr_arrays.h"
#include "hr_intern.h"
#include "hr_metric.h"
#include "hr_output.h"
#include "hr_pb.h"
#include "hr_symbolize.h"

/* Field numbers of profile.proto. */
enum {
    PB_PROFILE_SAMPLE_TYPE = 1, PB_PROFILE_SAMPLE = 2, PB_PROFILE_MAPPING = 3,
    PB_PROFILE_LOCATION = 4, PB_PROFILE_FUNCTION = 5, PB_PROFILE_STRING = 6,
    PB_PROFILE_TIME_NANOS = 9, PB_PROFILE_DURATION_NANOS = 10, PB_PROFILE_PERIOD_TYPE = 11,
    PB_PROFILE_PERIOD = 12, PB_PROFILE_COMMENT = 13, PB_PROFILE_DEFAULT_SAMPLE_TYPE = 14,
    PB_VALUE_TYPE_TYPE = 1, PB_VALUE_TYPE_UNIT = 2,
    PB_SAMPLE_LOCATION_ID = 1, PB_SAMPLE_VALUE = 2, PB_SAMPLE_LABEL = 3,
    PB_LABEL_KEY = 1, PB_LABEL_NUM = 3, PB_LABEL_NUM_UNIT = 4,
    PB_MAPPING_ID = 1, PB_MAPPING_START = 2, PB_MAPPING_LIMIT = 3, PB_MAPPING_OFFSET = 4,
    PB_MAPPING_FILENAME = 5, PB_MAPPING_BUILD_ID = 6, PB_MAPPING_HAS_FUNCTIONS = 7,
    PB_MAPPING_HAS_FILENAMES = 8, PB_MAPPING_HAS_LINE_NUMBERS = 9,
    PB_MAPPING_HAS_INLINE_FRAMES = 10,
    PB_LOCATION_ID = 1, PB_LOCATION_MAPPING_ID = 2, PB_LOCATION_ADDRESS = 3, PB_LOCATION_LINE = 4,
    PB_LINE_FUNCTION_ID = 1, PB_LINE_LINE = 2,
    PB_FUNCTION_ID = 1, PB_FUNCTION_NAME = 2, PB_FUNCTION_SYSTEM_NAME = 3,
    PB_FUNCTION_FILENAME = 4,
    PB_FUNCTION_START_LINE = 5,
};

/* The sample types, in the order of each sample's values (docs/REPORT.md lists them). */
static const struct {
    const char *type, *unit;
    enum hr_metric metric;
} hr_pprof_types[] = {
    {"alloc_objects", "count", HR_METRIC_ALLOC_COUNT},
    {"alloc_space", "bytes", HR_METRIC_ALLOC_BYTES},
    {"inuse_objects", "count", HR_METRIC_INUSE_COUNT},
    {"inuse_space", "bytes", HR_METRIC_INUSE_BYTES},
    {"peak_objects", "count", HR_METRIC_PEAK_COUNT},
    {"peak_space", "bytes", HR_METRIC_PEAK_BYTES},
    {"accesses", "count", HR_METRIC_ACCESSES},
    {"lifetime", "milliseconds", HR_METRIC_LIFETIME_MS},
};
#define HR_PPROF_NTYPES (sizeof hr_pprof_types / sizeof hr_pprof_types[0])

/* The sample type pprof shows first: the one --sort orders by, as the text report's top list. */
static const char *hr_pprof_default_type(enum hr_sort_key key)
{
    switch (key) {
    case HR_SORT_ALLOC_COUNT: return "alloc_objects";
    case HR_SORT_LIVE_SIZE: return "inuse_space";
    case HR_SORT_PEAK_LIVE_SIZE:
    case HR_SORT_MAX_LIVE_SIZE: return "peak_space";
    case HR_SORT_TOTAL_LIFETIME_MS: return "lifetime";
    case HR_SORT_TOTAL_ACCESS_COUNT:
    case HR_SORT_ACCESS_DENSITY: return "accesses";
    default: return "alloc_space";
    }
}

/* An address range of a module, for finding the mapping of a location. */
struct hr_pprof_range {
    uint64_t start, end;
    uint32_t mapping;
};

struct hr_pprof {
    const struct hr_profile *p;
    struct hr_symbolizer *sym;
    struct hr_strtab str;
    struct hr_u64map locs;  /* pc -> Location.id */
    struct hr_u64map funcs; /* name index << 32 | file index -> Function.id */
    uint32_t nlocs, nfuncs;
    struct hr_pb out;   /* the Profile message but for locations and functions */
    struct hr_pb loc;   /* Profile.location entries */
    struct hr_pb func;  /* Profile.function entries */
    struct hr_pprof_range *ranges;
    size_t nranges;
    int oom;
};

static uint64_t hr_pprof_str(struct hr_pprof *w, const char *s, size_t len)
{
    int64_t i = hr_strtab_add(&w->str, s, len);
    if (i < 0) {
        w->oom = 1;
        return 0;
    }
    return (uint64_t)i;
}

static uint64_t hr_pprof_strz(struct hr_pprof *w, const char *s)
{
    return hr_pprof_str(w, s, strlen(s));
}

static void hr_pprof_value_type(struct hr_pprof *w, uint32_t field, const char *type,
                                const char *unit)
{
    size_t m = hr_pb_begin(&w->out, field);
    hr_pb_uint(&w->out, PB_VALUE_TYPE_TYPE, hr_pprof_strz(w, type));
    hr_pb_uint(&w->out, PB_VALUE_TYPE_UNIT, hr_pprof_strz(w, unit));
    hr_pb_end(&w->out, m);
}

/* The range a mapping declares: its executable segments (where return addresses are), or
 * all of them when none is executable; file_offset is that of the range's first segment. */
static void hr_module_span(const struct hr_module *m, uint64_t *start, uint64_t *limit,
                           uint64_t *offset)
{
    int exec_only = 0;
    for (uint32_t i = 0; i < m->nsegs; i++)
        exec_only |= (m->segs[i].prot & 4) != 0;
    *start = UINT64_MAX;
    *limit = 0;
    for (uint32_t i = 0; i < m->nsegs; i++) {
        const struct hpf_segment *s = &m->segs[i];
        if (exec_only && !(s->prot & 4))
            continue;
        if (s->start < *start) {
            *start = s->start;
            *offset = s->offset;
        }
        if (s->end > *limit)
            *limit = s->end;
    }
}

/* One Mapping per module that has segments (id = module index + 1), and the table of every
 * segment for hr_pprof_mapping_of. */
static void hr_pprof_mappings(struct hr_pprof *w)
{
    const struct hr_profile *p = w->p;
    size_t nsegs = 0;
    for (size_t i = 0; i < p->nmodules; i++)
        nsegs += p->modules[i].nsegs;
    w->ranges = malloc((nsegs ? nsegs : 1) * sizeof *w->ranges);
    if (!w->ranges) {
        w->oom = 1;
        return;
    }
    for (size_t i = 0; i < p->nmodules; i++) {
        const struct hr_module *m = &p->modules[i];
        if (m->nsegs == 0)
            continue;
        for (uint32_t k = 0; k < m->nsegs; k++)
            w->ranges[w->nranges++] =
                (struct hr_pprof_range){m->segs[k].start, m->segs[k].end, (uint32_t)i + 1};
        uint64_t start, limit, offset = 0;
        hr_module_span(m, &start, &limit, &offset);
        char id[2 * 64 + 1];
        size_t idlen = 0;
        for (uint32_t k = 0; k < m->build_id_len && k < 64; k++, idlen += 2)
            snprintf(id + idlen, 3, "%02x", m->build_id[k]);
        size_t mk = hr_pb_begin(&w->out, PB_PROFILE_MAPPING);
        hr_pb_uint(&w->out, PB_MAPPING_ID, i + 1);
        hr_pb_uint(&w->out, PB_MAPPING_START, start);
        hr_pb_uint(&w->out, PB_MAPPING_LIMIT, limit);
        hr_pb_uint(&w->out, PB_MAPPING_OFFSET, offset);
        hr_pb_uint(&w->out, PB_MAPPING_FILENAME, hr_pprof_str(w, m->path.ptr ? m->path.ptr : "",
                                                               m->path.len));
        hr_pb_uint(&w->out, PB_MAPPING_BUILD_ID, hr_pprof_str(w, id, idlen));
        /* The locations come symbolised: pprof must not look for the binaries itself. */
        hr_pb_bool(&w->out, PB_MAPPING_HAS_FUNCTIONS, 1);
        hr_pb_bool(&w->out, PB_MAPPING_HAS_FILENAMES, 1);
        hr_pb_bool(&w->out, PB_MAPPING_HAS_LINE_NUMBERS, 1);
        hr_pb_bool(&w->out, PB_MAPPING_HAS_INLINE_FRAMES, 1);
        hr_pb_end(&w->out, mk);
    }
    qsort(w->ranges, w->nranges, sizeof *w->ranges, hr_start_cmp);
}

static uint32_t hr_pprof_mapping_of(const struct hr_pprof *w, uint64_t pc)
{
    size_t lo = hr_first_above(w->ranges, w->nranges, sizeof *w->ranges, pc);
    /* lo - 1 is the last range starting at or below pc; segments never overlap. */
    return lo && pc < w->ranges[lo - 1].end ? w->ranges[lo - 1].mapping : 0;
}

static uint32_t hr_pprof_function(struct hr_pprof *w, const struct hr_frame *f)
{
    uint64_t name = hr_pprof_strz(w, f->function[0] ? f->function : "??");
    uint64_t file = hr_pprof_strz(w, f->file);
    uint64_t key = name << 32 | file;
    uint32_t id = hr_u64map_get(&w->funcs, key);
    if (id)
        return id;
    id = ++w->nfuncs;
    if (hr_u64map_put(&w->funcs, key, id))
        w->oom = 1;
    size_t m = hr_pb_begin(&w->func, PB_PROFILE_FUNCTION);
    hr_pb_uint(&w->func, PB_FUNCTION_ID, id);
    hr_pb_uint(&w->func, PB_FUNCTION_NAME, name);
    hr_pb_uint(&w->func, PB_FUNCTION_SYSTEM_NAME, name);
    hr_pb_uint(&w->func, PB_FUNCTION_FILENAME, file);
    if (f->start_line > 0)
        hr_pb_uint(&w->func, PB_FUNCTION_START_LINE, (uint64_t)f->start_line);
    hr_pb_end(&w->func, m);
    return id;
}

/* The Location of a return address, written at its first use. Its lines are the inlined
 * functions innermost first, then the function the code belongs to, as profile.proto orders
 * them; an address with no known function has no line, and pprof shows the address. */
static uint32_t hr_pprof_location(struct hr_pprof *w, uint64_t pc)
{
    uint32_t id = hr_u64map_get(&w->locs, pc);
    if (id)
        return id;
    id = ++w->nlocs;
    if (hr_u64map_put(&w->locs, pc, id))
        w->oom = 1;
    struct hr_frame f;
    hr_symbolize(w->sym, pc, &f);
    size_t m = hr_pb_begin(&w->loc, PB_PROFILE_LOCATION);
    hr_pb_uint(&w->loc, PB_LOCATION_ID, id);
    hr_pb_uint(&w->loc, PB_LOCATION_MAPPING_ID, hr_pprof_mapping_of(w, pc));
    hr_pb_uint(&w->loc, PB_LOCATION_ADDRESS, pc);
    for (const struct hr_frame *g = f.function[0] ? &f : NULL; g; g = g->next) {
        uint32_t fn = hr_pprof_function(w, g);
        size_t l = hr_pb_begin(&w->loc, PB_LOCATION_LINE);
        hr_pb_uint(&w->loc, PB_LINE_FUNCTION_ID, fn);
        hr_pb_int(&w->loc, PB_LINE_LINE, g->line);
        hr_pb_end(&w->loc, l);
    }
    hr_pb_end(&w->loc, m);
    return id;
}

static void hr_pprof_label(struct hr_pprof *w, const char *key, int64_t num, const char *unit)
{
    size_t m = hr_pb_begin(&w->out, PB_SAMPLE_LABEL);
    hr_pb_uint(&w->out, PB_LABEL_KEY, hr_pprof_strz(w, key));
    hr_pb_int(&w->out, PB_LABEL_NUM, num);
    if (unit)
        hr_pb_uint(&w->out, PB_LABEL_NUM_UNIT, hr_pprof_strz(w, unit));
    hr_pb_end(&w->out, m);
}

/* One Sample for a context, unless every value is 0 (nothing to show, in a diff: no change).
 * Labels: "bytes", the average size of its blocks (as Go's heap profiles label a sample with
 * its object size, so -tagfocus=bytes=1kb: selects by size), and "context", its id in the
 * JSON and text reports. */
static void hr_pprof_sample(struct hr_pprof *w, const struct hr_context *c)
{
    int64_t v[HR_PPROF_NTYPES];
    int any = 0;
    for (size_t i = 0; i < HR_PPROF_NTYPES; i++)
        any |= (v[i] = hr_metric_value(w->p, c, hr_pprof_types[i].metric)) != 0;
    if (!any)
        return;
    size_t s = hr_pb_begin(&w->out, PB_PROFILE_SAMPLE);
    size_t m = hr_pb_begin(&w->out, PB_SAMPLE_LOCATION_ID);
    for (uint32_t i = 0; i < c->depth; i++)
        hr_pb_varint(&w->out, hr_pprof_location(w, c->pcs[i]));
    hr_pb_end(&w->out, m);
    m = hr_pb_begin(&w->out, PB_SAMPLE_VALUE);
    for (size_t i = 0; i < HR_PPROF_NTYPES; i++)
        hr_pb_varint(&w->out, (uint64_t)v[i]);
    hr_pb_end(&w->out, m);
    /* The size of the blocks themselves, also in a diff (of the base when the new profile has
     * none of them). */
    const struct hr_context *sz = c;
    if (hr_metric_raw(c, HR_METRIC_ALLOC_COUNT) == 0 && c->base)
        sz = c->base;
    uint64_t n = hr_metric_raw(sz, HR_METRIC_ALLOC_COUNT);
    if (n)
        hr_pprof_label(w, "bytes", (int64_t)(hr_metric_raw(sz, HR_METRIC_ALLOC_BYTES) / n),
                       "bytes");
    hr_pprof_label(w, "context", c->context_id, NULL);
    hr_pb_end(&w->out, s);
}

static const char *hr_pprof_reason(uint32_t r)
{
    switch (r) {
    case HPF_DUMP_EXIT: return "at exit";
    case HPF_DUMP_API: return "by heapprof_dump()";
    case HPF_DUMP_SIGNAL: return "on a signal";
    case HPF_DUMP_INTERVAL: return "by interval";
    case HPF_DUMP_KILLED: return "when a signal ended the process";
    case HPF_DUMP_CREDENTIALS: return "before a change of credentials";
    case HPF_DUMP_PEAK: return "at a new peak";
    default: return "for an unknown reason";
    }
}

/* Comments (go tool pprof -comments): the process, its command line, when the dump was made. */
static void hr_pprof_comments(struct hr_pprof *w)
{
    const struct hr_profile *p = w->p;
    char line[256];
    snprintf(line, sizeof line, "heapprof profile of pid %" PRIu32 ", written %s after %" PRIu64
             " ms%s", p->process.pid, hr_pprof_reason(p->process.dump_reason),
             p->process.dump_ms, p->diff_base ? " (a diff: this profile minus its base)" : "");
    hr_pb_uint(&w->out, PB_PROFILE_COMMENT, hr_pprof_strz(w, line));
    size_t at;
    char *cmd = hr_command_line(p, &at);
    if (!cmd) {
        w->oom = 1;
        return;
    }
    hr_pb_uint(&w->out, PB_PROFILE_COMMENT, hr_pprof_str(w, cmd, at));
    free(cmd);
}

/* The Profile's own fields, then the tables gathered while writing the samples. */
static void hr_pprof_finish(struct hr_pprof *w, const struct hr_output_opts *opts)
{
    const struct hr_profile *p = w->p;
    hr_pprof_comments(w);
    hr_pb_int(&w->out, PB_PROFILE_TIME_NANOS, (int64_t)p->process.dump_unix_ns);
    hr_pb_int(&w->out, PB_PROFILE_DURATION_NANOS, (int64_t)(p->process.dump_ms * 1000000));
    /* Every allocation is counted: no sampling period (1 byte, as pprof shows it). */
    hr_pprof_value_type(w, PB_PROFILE_PERIOD_TYPE, "space", "bytes");
    hr_pb_int(&w->out, PB_PROFILE_PERIOD, 1);
    hr_pb_int(&w->out, PB_PROFILE_DEFAULT_SAMPLE_TYPE,
              (int64_t)hr_pprof_strz(w, hr_pprof_default_type(opts->sort)));
    hr_pb_raw(&w->out, w->loc.buf, w->loc.len);
    hr_pb_raw(&w->out, w->func.buf, w->func.len);
    w->oom |= w->loc.failed || w->func.failed;
    for (size_t i = 0; i < w->str.n; i++)
        hr_pb_bytes(&w->out, PB_PROFILE_STRING, w->str.strs[i], w->str.lens[i]);
}

static void hr_pprof_free(struct hr_pprof *w)
{
    hr_symbolizer_free(w->sym);
    hr_strtab_free(&w->str);
    hr_u64map_free(&w->locs);
    hr_u64map_free(&w->funcs);
    hr_pb_free(&w->out);
    hr_pb_free(&w->loc);
    hr_pb_free(&w->func);
    free(w->ranges);
}

int hr_write_pprof(FILE *out, const struct hr_profile *p, const struct hr_output_opts *opts)
{
    struct hr_pprof w = {.p = p};
    struct hr_context **order = hr_contexts_sorted(p, opts->sort);
    w.sym = hr_symbolizer_new(p, opts->warn);
    if (!order || !w.sym) {
        free(order);
        hr_pprof_free(&w);
        return -1;
    }
    hr_pprof_strz(&w, ""); /* string_table[0] is always "" */
    for (size_t i = 0; i < HR_PPROF_NTYPES; i++)
        hr_pprof_value_type(&w, PB_PROFILE_SAMPLE_TYPE, hr_pprof_types[i].type,
                            hr_pprof_types[i].unit);
    hr_pprof_mappings(&w);
    size_t n = p->ncontexts;
    if (opts->json_top && opts->json_top < n)
        n = opts->json_top; /* --top N: the first N by --sort, as in JSON */
    for (size_t i = 0; i < n && !w.oom; i++)
        hr_pprof_sample(&w, order[i]);
    free(order);
    hr_pprof_finish(&w, opts);
    int r = -1;
    if (!w.oom && !w.out.failed)
        r = hr_gzip_write(out, w.out.buf, w.out.len);
    hr_pprof_free(&w);
    return r;
}
