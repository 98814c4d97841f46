/* Names, units and values of the per-context figures the export formats draw (hr_metric.h). */
#include <string.h>

#include "hr_metric.h"

static const char *const hr_metric_names[HR_METRIC_COUNT_] = {
    [HR_METRIC_ALLOC_BYTES] = "alloc_bytes", [HR_METRIC_ALLOC_COUNT] = "alloc_count",
    [HR_METRIC_INUSE_BYTES] = "inuse_bytes", [HR_METRIC_INUSE_COUNT] = "inuse_count",
    [HR_METRIC_PEAK_BYTES] = "peak_bytes",   [HR_METRIC_PEAK_COUNT] = "peak_count",
    [HR_METRIC_ACCESSES] = "accesses",       [HR_METRIC_LIFETIME_MS] = "lifetime_ms",
};

static const struct {
    const char *alias;
    enum hr_metric m;
} hr_metric_aliases[] = {
    {"bytes", HR_METRIC_ALLOC_BYTES},
    {"count", HR_METRIC_ALLOC_COUNT},
    {"leaked", HR_METRIC_INUSE_BYTES},
    {"peak", HR_METRIC_PEAK_BYTES},
};

const char *hr_metric_name(enum hr_metric m)
{
    return m < HR_METRIC_COUNT_ ? hr_metric_names[m] : "?";
}

const char *hr_metric_unit(enum hr_metric m)
{
    switch (m) {
    case HR_METRIC_ALLOC_BYTES:
    case HR_METRIC_INUSE_BYTES:
    case HR_METRIC_PEAK_BYTES: return "bytes";
    case HR_METRIC_LIFETIME_MS: return "milliseconds";
    default: return "count";
    }
}

int hr_metric_parse(const char *name, enum hr_metric *m)
{
    for (int i = 0; i < HR_METRIC_COUNT_; i++) {
        if (strcmp(name, hr_metric_names[i]) == 0) {
            *m = (enum hr_metric)i;
            return 0;
        }
    }
    for (size_t i = 0; i < sizeof hr_metric_aliases / sizeof hr_metric_aliases[0]; i++) {
        if (strcmp(name, hr_metric_aliases[i].alias) == 0) {
            *m = hr_metric_aliases[i].m;
            return 0;
        }
    }
    return -1;
}

uint64_t hr_metric_raw(const struct hr_context *c, enum hr_metric m)
{
    switch (m) {
    case HR_METRIC_ALLOC_BYTES: return c->has_live ? c->live.bytes : c->hib.total_size;
    case HR_METRIC_ALLOC_COUNT: return c->has_live ? c->live.allocs : c->hib.alloc_count;
    case HR_METRIC_INUSE_BYTES: return c->live.live_size;
    case HR_METRIC_INUSE_COUNT: return c->live.live_count;
    case HR_METRIC_PEAK_BYTES: return c->live.peak_live_size;
    case HR_METRIC_PEAK_COUNT: return c->live.peak_live_count;
    case HR_METRIC_ACCESSES: return c->hib.total_access_count;
    case HR_METRIC_LIFETIME_MS: return c->hib.total_lifetime_ms;
    default: return 0;
    }
}

int64_t hr_metric_value(const struct hr_profile *p, const struct hr_context *c, enum hr_metric m)
{
    int64_t v = (int64_t)hr_metric_raw(c, m);
    if (p->diff_base && c->base)
        v = hr_sub64(v, (int64_t)hr_metric_raw(c->base, m));
    return v;
}
