/* HIB arithmetic (format.h): merging partial HIBs. Adding a block is inline in format.h. */
#include "format/format.h"

#include <stddef.h>

/* Word for word, not a struct assignment: clang makes that a call of memcpy, which the
 * shim's metadata must not go through (docs/DESIGN.md). */
static void hib_copy(struct hpf_hib *dst, const struct hpf_hib *src)
{
    typedef uint64_t __attribute__((may_alias)) word;
    _Static_assert(sizeof *dst % sizeof(word) == 0, "a HIB is whole words");
    word *d = (word *)(void *)dst;
    const word *s = (const word *)(const void *)src;
    for (size_t i = 0; i < sizeof *dst / sizeof *d; i++)
        d[i] = s[i];
}

void hp_hib_merge(struct hpf_hib *dst, const struct hpf_hib *src)
{
    if (src->alloc_count == 0)
        return;
    if (dst->alloc_count == 0) {
        uint32_t id = dst->context_id, flags = dst->flags;
        hib_copy(dst, src);
        dst->context_id = id;
        dst->flags = flags;
        return;
    }
    dst->min_size = hp_min64(dst->min_size, src->min_size);
    dst->max_size = hp_max64(dst->max_size, src->max_size);
    dst->min_lifetime_ms = hp_min64(dst->min_lifetime_ms, src->min_lifetime_ms);
    dst->max_lifetime_ms = hp_max64(dst->max_lifetime_ms, src->max_lifetime_ms);
    dst->min_access_count = hp_min64(dst->min_access_count, src->min_access_count);
    dst->max_access_count = hp_max64(dst->max_access_count, src->max_access_count);
    dst->min_write_count = hp_min64(dst->min_write_count, src->min_write_count);
    dst->max_write_count = hp_max64(dst->max_write_count, src->max_write_count);
    if (src->min_percent_utilized < dst->min_percent_utilized)
        dst->min_percent_utilized = src->min_percent_utilized;
    if (src->max_percent_utilized > dst->max_percent_utilized)
        dst->max_percent_utilized = src->max_percent_utilized;
    dst->alloc_count += src->alloc_count;
    dst->total_size += src->total_size;
    dst->total_lifetime_ms += src->total_lifetime_ms;
    dst->total_access_count += src->total_access_count;
    dst->total_write_count += src->total_write_count;
    dst->total_percent_utilized += src->total_percent_utilized;
    dst->num_migrated_cpu += src->num_migrated_cpu;
    dst->num_lifetime_overlaps += src->num_lifetime_overlaps;
    dst->num_same_alloc_cpu += src->num_same_alloc_cpu;
    dst->num_same_dealloc_cpu += src->num_same_dealloc_cpu;
    if (src->dealloc_timestamp_ms >= dst->dealloc_timestamp_ms) {
        dst->alloc_timestamp_ms = src->alloc_timestamp_ms;
        dst->dealloc_timestamp_ms = src->dealloc_timestamp_ms;
        dst->alloc_cpu_id = src->alloc_cpu_id;
        dst->dealloc_cpu_id = src->dealloc_cpu_id;
    }
}
