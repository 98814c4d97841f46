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

/* A thread's running HIB of one context while access profiling is off (every block without
 * access data): only the fields such blocks move, laid out so that the four counters can share
 * a cache line with what comes before them and the rest fills the next one (profile.c puts it
 * at offset 48 of a 64-byte aligned entry; 76 bytes used). Lifetimes fit 32 bits (the ms clock
 * is 32 bits) and cpu ids 16 (as in the block header). hp_hib_run_to turns it into the
 * hpf_hib that hp_hib_add would have built from the same blocks. */
struct hp_hib_run {
    uint32_t num_migrated_cpu, num_lifetime_overlaps, num_same_alloc_cpu, num_same_dealloc_cpu;
    uint64_t alloc_count, total_size, total_lifetime_ms, min_size, max_size;
    uint32_t min_lifetime_ms, max_lifetime_ms, alloc_timestamp_ms, dealloc_timestamp_ms;
    uint16_t alloc_cpu_id, dealloc_cpu_id;
};

static inline void hp_hib_run_reset(struct hp_hib_run *r)
{
    *r = (struct hp_hib_run){0};
    r->min_size = UINT64_MAX;
    r->min_lifetime_ms = UINT32_MAX;
}

/* Add one freed block (no access data). Minima start at their largest value, so the first
 * block needs no case of its own but for the counters that compare with the previous block. */
static inline void hp_hib_run_add(struct hp_hib_run *r, uint64_t size, uint32_t alloc_ms,
                                  uint32_t dealloc_ms, uint32_t alloc_cpu, uint32_t dealloc_cpu)
{
    uint32_t life = dealloc_ms - alloc_ms;
    uint16_t acpu = (uint16_t)alloc_cpu, dcpu = (uint16_t)dealloc_cpu;
    uint32_t later = r->alloc_count != 0;
    r->min_size = hp_min64(r->min_size, size);
    r->max_size = hp_max64(r->max_size, size);
    r->min_lifetime_ms = life < r->min_lifetime_ms ? life : r->min_lifetime_ms;
    r->max_lifetime_ms = life > r->max_lifetime_ms ? life : r->max_lifetime_ms;
    r->num_migrated_cpu += acpu != dcpu;
    /* Blocks come in deallocation order (see hp_hib_add_base). */
    r->num_lifetime_overlaps += later & (alloc_ms < r->dealloc_timestamp_ms);
    r->num_same_alloc_cpu += later & (acpu == r->alloc_cpu_id);
    r->num_same_dealloc_cpu += later & (dcpu == r->dealloc_cpu_id);
    r->alloc_count++;
    r->total_size += size;
    r->total_lifetime_ms += life;
    r->alloc_timestamp_ms = alloc_ms;
    r->dealloc_timestamp_ms = dealloc_ms;
    r->alloc_cpu_id = acpu;
    r->dealloc_cpu_id = dcpu;
}

/* The hpf_hib of r's blocks (context_id and flags 0; all zero when r has none). */
static inline void hp_hib_run_to(const struct hp_hib_run *r, struct hpf_hib *h)
{
    *h = (struct hpf_hib){0};
    if (r->alloc_count == 0)
        return;
    h->alloc_count = r->alloc_count;
    h->total_size = r->total_size;
    h->min_size = r->min_size;
    h->max_size = r->max_size;
    h->total_lifetime_ms = r->total_lifetime_ms;
    h->min_lifetime_ms = r->min_lifetime_ms;
    h->max_lifetime_ms = r->max_lifetime_ms;
    h->alloc_timestamp_ms = r->alloc_timestamp_ms;
    h->dealloc_timestamp_ms = r->dealloc_timestamp_ms;
    h->alloc_cpu_id = r->alloc_cpu_id;
    h->dealloc_cpu_id = r->dealloc_cpu_id;
    h->num_migrated_cpu = r->num_migrated_cpu;
    h->num_lifetime_overlaps = r->num_lifetime_overlaps;
    h->num_same_alloc_cpu = r->num_same_alloc_cpu;
    h->num_same_dealloc_cpu = r->num_same_dealloc_cpu;
}

/* Merge src (which happened after dst, or concurrently) into dst. */
void hp_hib_merge(struct hpf_hib *dst, const struct hpf_hib *src);

#endif
