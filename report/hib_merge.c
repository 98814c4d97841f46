/* Merges the several HIB records one context can have (evicted entries, then the final one)
 * into one; the rules are those of docs/FORMAT.md, "Merging HIB records". */
#include "hr_profile.h"

#define HR_MIN(a, b) ((a) < (b) ? (a) : (b))
#define HR_MAX(a, b) ((a) > (b) ? (a) : (b))

void hr_hib_merge(struct hpf_hib *acc, const struct hpf_hib *rec)
{
    /* A record that saw no block has meaningless minima (often 0 or ~0): ignore them. */
    if (rec->alloc_count > 0) {
        if (acc->alloc_count == 0) {
            acc->min_size = rec->min_size;
            acc->min_lifetime_ms = rec->min_lifetime_ms;
            acc->min_access_count = rec->min_access_count;
            acc->min_percent_utilized = rec->min_percent_utilized;
        } else {
            acc->min_size = HR_MIN(acc->min_size, rec->min_size);
            acc->min_lifetime_ms = HR_MIN(acc->min_lifetime_ms, rec->min_lifetime_ms);
            acc->min_access_count = HR_MIN(acc->min_access_count, rec->min_access_count);
            acc->min_percent_utilized =
                HR_MIN(acc->min_percent_utilized, rec->min_percent_utilized);
        }
    }
    acc->max_size = HR_MAX(acc->max_size, rec->max_size);
    acc->max_lifetime_ms = HR_MAX(acc->max_lifetime_ms, rec->max_lifetime_ms);
    acc->max_access_count = HR_MAX(acc->max_access_count, rec->max_access_count);
    acc->max_percent_utilized = HR_MAX(acc->max_percent_utilized, rec->max_percent_utilized);

    acc->alloc_count += rec->alloc_count;
    acc->total_size += rec->total_size;
    acc->total_lifetime_ms += rec->total_lifetime_ms;
    acc->total_access_count += rec->total_access_count;
    acc->total_percent_utilized += rec->total_percent_utilized;
    acc->num_migrated_cpu += rec->num_migrated_cpu;
    acc->num_lifetime_overlaps += rec->num_lifetime_overlaps;
    acc->num_same_alloc_cpu += rec->num_same_alloc_cpu;
    acc->num_same_dealloc_cpu += rec->num_same_dealloc_cpu;

    /* "Last block" fields follow the most recent deallocation; on a tie the record that comes
     * later in the file wins, as it was written later. */
    if (rec->dealloc_timestamp_ms >= acc->dealloc_timestamp_ms) {
        acc->alloc_timestamp_ms = rec->alloc_timestamp_ms;
        acc->dealloc_timestamp_ms = rec->dealloc_timestamp_ms;
        acc->alloc_cpu_id = rec->alloc_cpu_id;
        acc->dealloc_cpu_id = rec->dealloc_cpu_id;
    }
    acc->flags |= rec->flags;
}
