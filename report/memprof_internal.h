/* What the writers of LLVM MemProf raw profiles share (memprof_mib.c, memprof_layout.c,
 * memprof_out.c): the byte layout of raw version 2, the one llvm-profdata 16 reads
 * (docs/REPORT.md, "memprof"), and the Memory Info Block in host form. */
#ifndef HR_MEMPROF_INTERNAL_H
#define HR_MEMPROF_INTERNAL_H

#include <stddef.h>
#include <stdint.h>

#include "hr_profile.h"

/* The first 8 bytes of a raw profile, read as a little-endian number: 0xff, "mprofr", 0x81
 * from the most significant byte down. */
#define HR_MEMPROF_MAGIC                                                                      \
    ((uint64_t)0xff << 56 | (uint64_t)'m' << 48 | (uint64_t)'p' << 40 | (uint64_t)'r' << 32 | \
     (uint64_t)'o' << 24 | (uint64_t)'f' << 16 | (uint64_t)'r' << 8 | (uint64_t)0x81)
#define HR_MEMPROF_VERSION 2u

/* Sizes of the packed (unaligned) structures of version 2: the header is six numbers, a
 * segment entry start, end, file offset and 32 bytes of build id, a MIB 132 bytes. */
#define HR_MEMPROF_HEADER_SIZE 48u
#define HR_MEMPROF_SEGMENT_SIZE 56u
#define HR_MEMPROF_BUILD_ID_MAX 32u
#define HR_MEMPROF_MIB_SIZE 132u

/* One Memory Info Block, the fields in the order and width of the file. */
struct hr_mib {
    uint32_t alloc_count;
    uint64_t total_access_count, min_access_count, max_access_count;
    uint64_t total_size;
    uint32_t min_size, max_size;
    uint32_t alloc_timestamp, dealloc_timestamp;
    uint64_t total_lifetime;
    uint32_t min_lifetime, max_lifetime;
    uint32_t alloc_cpu_id, dealloc_cpu_id;
    uint32_t num_migrated_cpu, num_lifetime_overlaps, num_same_alloc_cpu, num_same_dealloc_cpu;
    uint64_t data_type_id;
    uint64_t total_access_density;
    uint32_t min_access_density, max_access_density;
    uint64_t total_lifetime_access_density;
    uint32_t min_lifetime_access_density, max_lifetime_access_density;
};

/* The MIB of a context's merged HIB (memprof_mib.c; the mapping is in docs/REPORT.md). */
void hr_memprof_mib(const struct hpf_hib *h, struct hr_mib *m);

/* Stores v little-endian at p; returns p past it (memprof_layout.c). */
uint8_t *hr_memprof_put64(uint8_t *p, uint64_t v);
/* The header at p (HR_MEMPROF_HEADER_SIZE bytes). */
void hr_memprof_put_header(uint8_t *p, uint64_t total, uint64_t seg_off, uint64_t mib_off,
                           uint64_t stack_off);
/* One segment entry at p (HR_MEMPROF_SEGMENT_SIZE bytes); a build id longer than 32 bytes
 * is cut. */
void hr_memprof_put_segment(uint8_t *p, const struct hpf_segment *s, const uint8_t *build_id,
                            uint32_t build_id_len);
/* One MIB at p (HR_MEMPROF_MIB_SIZE bytes). */
void hr_memprof_put_mib(uint8_t *p, const struct hr_mib *m);

#endif
