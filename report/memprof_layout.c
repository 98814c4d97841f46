/* The bytes of LLVM MemProf raw profile version 2: its header, segment entries and Memory
 * Info Blocks, written field by field in little-endian order as the packed structures of
 * LLVM's MemProfData.inc lay them out (no padding inside them). */
#include <string.h>

#include "memprof_internal.h"

uint8_t *hr_memprof_put64(uint8_t *p, uint64_t v)
{
    for (int i = 0; i < 8; i++)
        p[i] = (uint8_t)(v >> (8 * i));
    return p + 8;
}

static uint8_t *hr_put32(uint8_t *p, uint32_t v)
{
    for (int i = 0; i < 4; i++)
        p[i] = (uint8_t)(v >> (8 * i));
    return p + 4;
}

void hr_memprof_put_header(uint8_t *p, uint64_t total, uint64_t seg_off, uint64_t mib_off,
                           uint64_t stack_off)
{
    p = hr_memprof_put64(p, HR_MEMPROF_MAGIC);
    p = hr_memprof_put64(p, HR_MEMPROF_VERSION);
    p = hr_memprof_put64(p, total);
    p = hr_memprof_put64(p, seg_off);
    p = hr_memprof_put64(p, mib_off);
    hr_memprof_put64(p, stack_off);
}

void hr_memprof_put_segment(uint8_t *p, const struct hpf_segment *s, const uint8_t *build_id,
                            uint32_t build_id_len)
{
    p = hr_memprof_put64(p, s->start);
    p = hr_memprof_put64(p, s->end);
    p = hr_memprof_put64(p, s->offset);
    uint32_t n = build_id_len < HR_MEMPROF_BUILD_ID_MAX ? build_id_len : HR_MEMPROF_BUILD_ID_MAX;
    memset(p, 0, HR_MEMPROF_BUILD_ID_MAX);
    if (n)
        memcpy(p, build_id, n);
}

void hr_memprof_put_mib(uint8_t *p, const struct hr_mib *m)
{
    p = hr_put32(p, m->alloc_count);
    p = hr_memprof_put64(p, m->total_access_count);
    p = hr_memprof_put64(p, m->min_access_count);
    p = hr_memprof_put64(p, m->max_access_count);
    p = hr_memprof_put64(p, m->total_size);
    p = hr_put32(p, m->min_size);
    p = hr_put32(p, m->max_size);
    p = hr_put32(p, m->alloc_timestamp);
    p = hr_put32(p, m->dealloc_timestamp);
    p = hr_memprof_put64(p, m->total_lifetime);
    p = hr_put32(p, m->min_lifetime);
    p = hr_put32(p, m->max_lifetime);
    p = hr_put32(p, m->alloc_cpu_id);
    p = hr_put32(p, m->dealloc_cpu_id);
    p = hr_put32(p, m->num_migrated_cpu);
    p = hr_put32(p, m->num_lifetime_overlaps);
    p = hr_put32(p, m->num_same_alloc_cpu);
    p = hr_put32(p, m->num_same_dealloc_cpu);
    p = hr_memprof_put64(p, m->data_type_id);
    p = hr_memprof_put64(p, m->total_access_density);
    p = hr_put32(p, m->min_access_density);
    p = hr_put32(p, m->max_access_density);
    p = hr_memprof_put64(p, m->total_lifetime_access_density);
    p = hr_put32(p, m->min_lifetime_access_density);
    hr_put32(p, m->max_lifetime_access_density);
}
