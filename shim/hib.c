/* HIB arithmetic (see hib.h). A block's lifetime is dealloc - alloc in the shim's ms clock,
 * which wraps after 49 days: unsigned subtraction keeps lifetimes right across the wrap. */
#include "hib.h"

static inline uint64_t min64(uint64_t a, uint64_t b) { return a < b ? a : b; }
static inline uint64_t max64(uint64_t a, uint64_t b) { return a > b ? a : b; }

void hp_hib_add(struct hpf_hib *h, const struct hp_block_event *e)
{
    uint64_t life = (uint32_t)(e->dealloc_ms - e->alloc_ms);
    if (h->alloc_count == 0) {
        h->min_size = h->max_size = e->size;
        h->min_lifetime_ms = h->max_lifetime_ms = life;
        h->min_access_count = h->max_access_count = e->access_count;
        h->min_percent_utilized = h->max_percent_utilized = e->percent_utilized;
        h->num_migrated_cpu = e->alloc_cpu != e->dealloc_cpu;
    } else {
        h->min_size = min64(h->min_size, e->size);
        h->max_size = max64(h->max_size, e->size);
        h->min_lifetime_ms = min64(h->min_lifetime_ms, life);
        h->max_lifetime_ms = max64(h->max_lifetime_ms, life);
        h->min_access_count = min64(h->min_access_count, e->access_count);
        h->max_access_count = max64(h->max_access_count, e->access_count);
        if (e->percent_utilized < h->min_percent_utilized)
            h->min_percent_utilized = e->percent_utilized;
        if (e->percent_utilized > h->max_percent_utilized)
            h->max_percent_utilized = e->percent_utilized;
        h->num_migrated_cpu += e->alloc_cpu != e->dealloc_cpu;
        /* Blocks are added in deallocation order: this one overlaps the previous one's
         * lifetime when it was allocated before that one was freed. */
        h->num_lifetime_overlaps += e->alloc_ms < h->dealloc_timestamp_ms;
        h->num_same_alloc_cpu += e->alloc_cpu == h->alloc_cpu_id;
        h->num_same_dealloc_cpu += e->dealloc_cpu == h->dealloc_cpu_id;
    }
    h->alloc_count++;
    h->total_size += e->size;
    h->total_lifetime_ms += life;
    h->total_access_count += e->access_count;
    h->total_percent_utilized += e->percent_utilized;
    h->alloc_timestamp_ms = e->alloc_ms;
    h->dealloc_timestamp_ms = e->dealloc_ms;
    h->alloc_cpu_id = e->alloc_cpu;
    h->dealloc_cpu_id = e->dealloc_cpu;
}

void hp_hib_merge(struct hpf_hib *dst, const struct hpf_hib *src)
{
    if (src->alloc_count == 0)
        return;
    if (dst->alloc_count == 0) {
        uint32_t id = dst->context_id, flags = dst->flags;
        *dst = *src;
        dst->context_id = id;
        dst->flags = flags;
        return;
    }
    dst->min_size = min64(dst->min_size, src->min_size);
    dst->max_size = max64(dst->max_size, src->max_size);
    dst->min_lifetime_ms = min64(dst->min_lifetime_ms, src->min_lifetime_ms);
    dst->max_lifetime_ms = max64(dst->max_lifetime_ms, src->max_lifetime_ms);
    dst->min_access_count = min64(dst->min_access_count, src->min_access_count);
    dst->max_access_count = max64(dst->max_access_count, src->max_access_count);
    if (src->min_percent_utilized < dst->min_percent_utilized)
        dst->min_percent_utilized = src->min_percent_utilized;
    if (src->max_percent_utilized > dst->max_percent_utilized)
        dst->max_percent_utilized = src->max_percent_utilized;
    dst->alloc_count += src->alloc_count;
    dst->total_size += src->total_size;
    dst->total_lifetime_ms += src->total_lifetime_ms;
    dst->total_access_count += src->total_access_count;
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
