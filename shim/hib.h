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

/* Add one block's life to h (h->context_id is left alone). */
void hp_hib_add(struct hpf_hib *h, const struct hp_block_event *e);
/* Merge src (which happened after dst, or concurrently) into dst. */
void hp_hib_merge(struct hpf_hib *dst, const struct hpf_hib *src);

#endif
