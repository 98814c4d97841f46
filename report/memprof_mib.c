/* The Memory Info Block that LLVM's MemProf keeps per allocation context, filled from the
 * merged Heap Info Block of a heapprof context: the same figures in the same units, narrowed
 * to the widths of LLVM's layout, plus the access densities LLVM derives per block. */
#include "memprof_internal.h"

static uint32_t hr_sat32(uint64_t v) { return v > UINT32_MAX ? UINT32_MAX : (uint32_t)v; }

/* a * b / c without overflow in between, saturated to 64 bits; 0 when c is 0. */
static uint64_t hr_muldiv(uint64_t a, uint64_t b, uint64_t c)
{
    if (c == 0)
        return 0;
    unsigned __int128 q = (unsigned __int128)a * b / c;
    return q > UINT64_MAX ? UINT64_MAX : (uint64_t)q;
}

/* LLVM's per-block access density is accesses * 100 / size (hundredths of an access per
 * byte), and its lifetime density that * 1000 / lifetime in ms (a lifetime of 0 taken as 1);
 * a MIB holds their sum over the blocks, minimum and maximum. The HIB keeps no per-block
 * densities, so these are derived from the aggregates: exact when the context's blocks are
 * alike, otherwise the sums are those of average blocks and the minimum and maximum are
 * bounds (fewest accesses over largest size, most over smallest). LLVM 16 decides hot and cold
 * from MaxAccessCount, MinSize and MinLifetime, which are exact. */
static void hr_mib_densities(const struct hpf_hib *h, struct hr_mib *m)
{
    uint64_t avg_life = h->alloc_count ? h->total_lifetime_ms / h->alloc_count : 0;
    m->total_access_density = hr_muldiv(h->total_access_count, 100 * h->alloc_count,
                                        h->total_size);
    uint64_t min_d = hr_muldiv(h->min_access_count, 100, h->max_size);
    uint64_t max_d = hr_muldiv(h->max_access_count, 100, h->min_size);
    m->min_access_density = hr_sat32(min_d);
    m->max_access_density = hr_sat32(max_d);
    m->total_lifetime_access_density =
        hr_muldiv(m->total_access_density, 1000, avg_life ? avg_life : 1);
    m->min_lifetime_access_density =
        hr_sat32(hr_muldiv(min_d, 1000, h->max_lifetime_ms ? h->max_lifetime_ms : 1));
    m->max_lifetime_access_density =
        hr_sat32(hr_muldiv(max_d, 1000, h->min_lifetime_ms ? h->min_lifetime_ms : 1));
}

void hr_memprof_mib(const struct hpf_hib *h, struct hr_mib *m)
{
    *m = (struct hr_mib){0};
    /* Counts and sizes LLVM keeps in 32 bits saturate: a context of more than 4G blocks or a
     * block of 4 GiB and more shows UINT32_MAX there (its total size stays exact). */
    m->alloc_count = hr_sat32(h->alloc_count);
    /* Both count the shadow counters of a block's 64-byte granules: one per instrumented
     * load or store, one per 8 bytes of memset/memcpy/memmove, in the same units. */
    m->total_access_count = h->total_access_count;
    m->min_access_count = h->min_access_count;
    m->max_access_count = h->max_access_count;
    m->total_size = h->total_size;
    m->min_size = hr_sat32(h->min_size);
    m->max_size = hr_sat32(h->max_size);
    /* Milliseconds since the profiler started, on both sides; the shim's clock is 32-bit. */
    m->alloc_timestamp = (uint32_t)h->alloc_timestamp_ms;
    m->dealloc_timestamp = (uint32_t)h->dealloc_timestamp_ms;
    m->total_lifetime = h->total_lifetime_ms;
    m->min_lifetime = hr_sat32(h->min_lifetime_ms);
    m->max_lifetime = hr_sat32(h->max_lifetime_ms);
    m->alloc_cpu_id = h->alloc_cpu_id;
    m->dealloc_cpu_id = h->dealloc_cpu_id;
    m->num_migrated_cpu = h->num_migrated_cpu;
    m->num_lifetime_overlaps = h->num_lifetime_overlaps;
    m->num_same_alloc_cpu = h->num_same_alloc_cpu;
    m->num_same_dealloc_cpu = h->num_same_dealloc_cpu;
    hr_mib_densities(h, m);
}
