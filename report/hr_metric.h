/* The figures every export format can show for a context (metric.c): one name per figure, its
 * unit, and its value, which in a diff (--diff BASE NEW) is the new profile's value minus the
 * base's. Formats that draw one number per stack (pprof samples, folded lines, flame graphs)
 * read contexts through these so that they agree with each other and with the diff. */
#ifndef HR_METRIC_H
#define HR_METRIC_H
#include <stdint.h>
#include "hr_profile.h"

enum hr_metric {
    HR_METRIC_ALLOC_BYTES,  /* requested bytes of every allocation (LIVE.bytes, else HIB) */
    HR_METRIC_ALLOC_COUNT,  /* allocations (LIVE.allocs, else HIB.alloc_count) */
    HR_METRIC_INUSE_BYTES,  /* bytes still live at the dump (leaked, in a final profile) */
    HR_METRIC_INUSE_COUNT,  /* blocks still live at the dump */
    HR_METRIC_PEAK_BYTES,   /* this context's live bytes at the process's global peak */
    HR_METRIC_PEAK_COUNT,   /* its live blocks then */
    HR_METRIC_ACCESSES,     /* total_access_count from the shadow */
    HR_METRIC_LIFETIME_MS,  /* total_lifetime_ms of its blocks */
    HR_METRIC_COUNT_        /* number of metrics */
};

/* "alloc_bytes", "alloc_count", "inuse_bytes", "inuse_count", "peak_bytes", "peak_count",
 * "accesses", "lifetime_ms"; aliases accepted by hr_metric_parse: "bytes" (alloc_bytes),
 * "count" (alloc_count), "leaked" (inuse_bytes), "peak" (peak_bytes). */
const char *hr_metric_name(enum hr_metric m);
/* "bytes", "count" or "milliseconds". */
const char *hr_metric_unit(enum hr_metric m);
/* Parses a metric name or alias; 0 and *m set, or -1. */
int hr_metric_parse(const char *name, enum hr_metric *m);

/* The context's value: its own figure, or in a diff profile (p->diff_base set) its figure
 * minus that of its counterpart in the base (c->base; a context absent from the base counts
 * from 0, one absent from the new profile is present with zero figures and c->base set). */
int64_t hr_metric_value(const struct hr_profile *p, const struct hr_context *c, enum hr_metric m);

/* a + b and a - b as the profile's unsigned counters add up: wrapping past 2^63 (a damaged
 * profile's figures can), never undefined. */
static inline int64_t hr_add64(int64_t a, int64_t b) { return (int64_t)((uint64_t)a + (uint64_t)b); }
static inline int64_t hr_sub64(int64_t a, int64_t b) { return (int64_t)((uint64_t)a - (uint64_t)b); }
/* The context's own unsigned figure, never a difference. */
uint64_t hr_metric_raw(const struct hr_context *c, enum hr_metric m);
#endif
