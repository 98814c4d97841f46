/* Heap Info Block arithmetic: adding one freed block to a HIB and merging two partial HIBs,
 * with the RFC's rules for min/max, cpu and lifetime-overlap counters. Pure functions. */
#ifndef HP_HIB_H
#define HP_HIB_H

#include <stdint.h>

#include "hpf_format.h"

struct hp_block_event {
    uint64_t size;
    uint32_t alloc_ms, dealloc_ms;
    uint32_t alloc_cpu, dealloc_cpu;
    uint64_t access_count;   /* 0 until access profiling is on */
    uint32_t percent_utilized;
};

#define HP_HIB_UNLIKELY(x) __builtin_expect(!!(x), 0)

static inline uint64_t hp_min64(uint64_t a, uint64_t b) { return a < b ? a : b; }
static inline uint64_t hp_max64(uint64_t a, uint64_t b) { return a > b ? a : b; }

/* The part of adding a block that every block has: size, lifetime, cpus, times, counts. Last,
 * after the access part (which looks at alloc_count too). A block's lifetime is
 * dealloc - alloc in the shim's ms clock, which wraps after 49 days: unsigned subtraction keeps
 * lifetimes right across the wrap. */
static inline void hp_hib_add_base(struct hpf_hib *h, const struct hp_block_event *e)
{
    uint64_t life = (uint32_t)(e->dealloc_ms - e->alloc_ms);
    if (h->alloc_count == 0) {
        h->min_size = h->max_size = e->size;
        h->min_lifetime_ms = h->max_lifetime_ms = life;
        h->num_migrated_cpu = e->alloc_cpu != e->dealloc_cpu;
    } else {
        h->min_size = hp_min64(h->min_size, e->size);
        h->max_size = hp_max64(h->max_size, e->size);
        h->min_lifetime_ms = hp_min64(h->min_lifetime_ms, life);
        h->max_lifetime_ms = hp_max64(h->max_lifetime_ms, life);
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
    h->alloc_timestamp_ms = e->alloc_ms;
    h->dealloc_timestamp_ms = e->dealloc_ms;
    h->alloc_cpu_id = e->alloc_cpu;
    h->dealloc_cpu_id = e->dealloc_cpu;
}

/* Add one block's life to h (h->context_id is left alone). Inline: it is on every free. */
static inline void hp_hib_add(struct hpf_hib *h, const struct hp_block_event *e)
{
    if (h->alloc_count == 0) {
        h->min_access_count = h->max_access_count = e->access_count;
        h->min_percent_utilized = h->max_percent_utilized = e->percent_utilized;
    } else {
        h->min_access_count = hp_min64(h->min_access_count, e->access_count);
        h->max_access_count = hp_max64(h->max_access_count, e->access_count);
        if (e->percent_utilized < h->min_percent_utilized)
            h->min_percent_utilized = e->percent_utilized;
        if (e->percent_utilized > h->max_percent_utilized)
            h->max_percent_utilized = e->percent_utilized;
    }
    h->total_access_count += e->access_count;
    h->total_percent_utilized += e->percent_utilized;
    hp_hib_add_base(h, e);
}

/* hp_hib_add for a block without access data (access count and utilisation 0), as every block
 * is while access profiling is off: the same result with fewer instructions on every free. The
 * access fields move only when an earlier block had access data (their minimum drops to 0). */
static inline void hp_hib_add_plain(struct hpf_hib *h, const struct hp_block_event *e)
{
    if (h->alloc_count == 0) {
        h->min_access_count = h->max_access_count = 0;
        h->min_percent_utilized = h->max_percent_utilized = 0;
    } else if (HP_HIB_UNLIKELY(h->min_access_count | h->min_percent_utilized)) {
        h->min_access_count = 0;
        h->min_percent_utilized = 0;
    }
    hp_hib_add_base(h, e);
}

/* Merge src (which happened after dst, or concurrently) into dst. */
void hp_hib_merge(struct hpf_hib *dst, const struct hpf_hib *src);

#endif
