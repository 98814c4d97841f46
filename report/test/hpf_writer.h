/* Test helper: builds synthetic .hpf profiles in memory, record by record, so report tests can
 * describe exactly the input they feed the reader (and then damage it). Included by each test
 * file directly; everything is static so each test binary stays standalone. */
#ifndef HT_HPF_WRITER_H
#define HT_HPF_WRITER_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "format/format.h"

struct ht_buf {
    uint8_t *data;
    size_t len, cap;
    uint64_t records; /* records written so far, for END */
    size_t open;      /* offset of the record being written */
};

static inline void ht_put(struct ht_buf *b, const void *p, size_t n)
{
    if (b->len + n > b->cap) {
        size_t cap = b->cap ? b->cap : 256;
        while (cap < b->len + n)
            cap *= 2;
        b->data = realloc(b->data, cap);
        if (!b->data)
            abort();
        b->cap = cap;
    }
    if (n)
        memcpy(b->data + b->len, p, n);
    b->len += n;
}

static inline void ht_zeros(struct ht_buf *b, size_t n)
{
    static const uint8_t z[8];
    while (n) {
        size_t k = n < 8 ? n : 8;
        ht_put(b, z, k);
        n -= k;
    }
}

static inline void ht_file_header(struct ht_buf *b)
{
    struct hpf_file_header h = {.version = HPF_VERSION,
                                .header_size = sizeof h,
                                .endian_check = HPF_ENDIAN_CHECK};
    memcpy(h.magic, HPF_MAGIC, 8);
    ht_put(b, &h, sizeof h);
}

static inline void ht_begin(struct ht_buf *b, uint32_t type)
{
    struct hpf_record_header rh = {.type = type};
    b->open = b->len;
    ht_put(b, &rh, sizeof rh);
}

/* Patches the size of the open record and pads it to 8. */
static inline void ht_finish(struct ht_buf *b)
{
    uint64_t size = b->len - b->open - sizeof(struct hpf_record_header);
    memcpy(b->data + b->open + offsetof(struct hpf_record_header, size), &size, sizeof size);
    ht_zeros(b, (8 - size % 8) % 8);
    b->records++;
}

static inline void ht_record(struct ht_buf *b, uint32_t type, const void *payload, size_t n)
{
    ht_begin(b, type);
    ht_put(b, payload, n);
    ht_finish(b);
}

static inline void ht_string(struct ht_buf *b, const char *s, size_t len)
{
    uint32_t l = (uint32_t)len;
    ht_put(b, &l, sizeof l);
    ht_put(b, s, len);
    ht_zeros(b, (4 - len % 4) % 4);
}

/* A PROCESS record; allocator NULL: one written without that (optional) string. */
static inline void ht_process_alloc(struct ht_buf *b, const struct hpf_process *pr,
                                    const char *backend, const char *exe,
                                    const char *const *argv, const char *allocator)
{
    ht_begin(b, HPF_REC_PROCESS);
    ht_put(b, pr, sizeof *pr);
    ht_string(b, backend, strlen(backend));
    ht_string(b, exe, strlen(exe));
    for (uint32_t i = 0; i < pr->argc; i++)
        ht_string(b, argv[i], strlen(argv[i]));
    if (allocator)
        ht_string(b, allocator, strlen(allocator));
    ht_finish(b);
}

static inline void ht_process(struct ht_buf *b, const struct hpf_process *pr, const char *backend,
                       const char *exe, const char *const *argv)
{
    ht_process_alloc(b, pr, backend, exe, argv, NULL);
}

static inline void ht_module(struct ht_buf *b, uint64_t bias, const struct hpf_segment *segs,
                      uint32_t nsegs, const uint8_t *id, uint32_t idlen, const char *path)
{
    struct hpf_module m = {.load_bias = bias, .nsegs = nsegs, .build_id_len = idlen};
    ht_begin(b, HPF_REC_MODULE);
    ht_put(b, &m, sizeof m);
    ht_put(b, segs, nsegs * sizeof *segs);
    ht_put(b, id, idlen);
    ht_zeros(b, (4 - idlen % 4) % 4);
    ht_string(b, path, strlen(path));
    ht_finish(b);
}

static inline void ht_stack(struct ht_buf *b, uint32_t id, const uint64_t *pcs, uint32_t depth)
{
    struct hpf_stack s = {.context_id = id, .depth = depth};
    ht_begin(b, HPF_REC_STACK);
    ht_put(b, &s, sizeof s);
    ht_put(b, pcs, depth * sizeof *pcs);
    ht_finish(b);
}

/* A FRAMES record of count nodes numbered from first: node first + i has parent parent[i] and
 * pc pcs[i], encoded as the shim encodes them (format/format.h). */
static inline void ht_frames(struct ht_buf *b, uint32_t first, uint32_t count,
                             const uint32_t *parent, const uint64_t *pcs)
{
    struct hpf_frames f = {.first_node = first, .count = count};
    ht_begin(b, HPF_REC_FRAMES);
    ht_put(b, &f, sizeof f);
    uint64_t prev = 0;
    for (uint32_t i = 0; i < count; i++) {
        uint8_t enc[20];
        unsigned n = hpf_uleb_put(enc, first + i - parent[i]);
        n += hpf_uleb_put(enc + n, hpf_zigzag(pcs[i] - prev));
        prev = pcs[i];
        ht_put(b, enc, n);
    }
    ht_finish(b);
}

/* A FRAMES record with count nodes whose encoding is given as raw bytes (to damage it). */
static inline void ht_frames_raw(struct ht_buf *b, uint32_t first, uint32_t count,
                                 const void *bytes, size_t n)
{
    struct hpf_frames f = {.first_node = first, .count = count};
    ht_begin(b, HPF_REC_FRAMES);
    ht_put(b, &f, sizeof f);
    ht_put(b, bytes, n);
    ht_finish(b);
}

static inline void ht_stack_refs(struct ht_buf *b, const struct hpf_stack_ref *refs, uint32_t n)
{
    struct hpf_stack_refs h = {.count = n};
    ht_begin(b, HPF_REC_STACK_REFS);
    ht_put(b, &h, sizeof h);
    ht_put(b, refs, n * sizeof *refs);
    ht_finish(b);
}

/* A PACKED record of n HIB or LIVE structs (type HPF_REC_HIB / HPF_REC_LIVE), each entry
 * written with nfields numbers: the known fields, then zeros past them (a newer writer's
 * fields), or only the first nfields. */
static inline void ht_packed(struct ht_buf *b, uint32_t type, const void *recs, uint32_t n,
                             uint32_t nfields)
{
    const struct hpf_field *fields = type == HPF_REC_HIB ? hpf_hib_fields : hpf_live_fields;
    uint32_t known = type == HPF_REC_HIB ? HPF_HIB_NFIELDS : HPF_LIVE_NFIELDS;
    size_t size = type == HPF_REC_HIB ? sizeof(struct hpf_hib) : sizeof(struct hpf_live);
    struct hpf_packed h = {.type = type, .count = n, .nfields = nfields};
    ht_begin(b, HPF_REC_PACKED);
    ht_put(b, &h, sizeof h);
    for (uint32_t i = 0; i < n; i++) {
        const char *r = (const char *)recs + i * size;
        for (uint32_t f = 0; f < nfields; f++) {
            uint64_t v = 0;
            if (f < known && fields[f].size == 4) {
                uint32_t v32;
                memcpy(&v32, r + fields[f].offset, 4);
                v = v32;
            } else if (f < known) {
                memcpy(&v, r + fields[f].offset, 8);
            }
            uint8_t enc[10];
            ht_put(b, enc, hpf_uleb_put(enc, v));
        }
    }
    ht_finish(b);
}

/* An ACCESS record: the header's fields, then n modules (address and mode). */
static inline void ht_access(struct ht_buf *b, uint32_t modes, uint32_t granule,
                             uint32_t hist_bins, const struct hpf_access_module *mods, uint32_t n)
{
    struct hpf_access a = {.modes = modes, .granule = granule, .hist_bins = hist_bins,
                           .nmodules = n};
    ht_begin(b, HPF_REC_ACCESS);
    ht_put(b, &a, sizeof a);
    ht_put(b, mods, n * sizeof *mods);
    ht_finish(b);
}

/* An ACCESS record with the per-word parameters after its modules (the shim's layout since
 * per-word histograms). */
static inline void ht_access_words(struct ht_buf *b, uint32_t modes, uint32_t hist_bins,
                                   const struct hpf_access_module *mods, uint32_t n,
                                   const struct hpf_access_words *w)
{
    struct hpf_access a = {.modes = modes, .granule = 64, .hist_bins = hist_bins, .nmodules = n};
    ht_begin(b, HPF_REC_ACCESS);
    ht_put(b, &a, sizeof a);
    ht_put(b, mods, n * sizeof *mods);
    ht_put(b, w, sizeof *w);
    ht_finish(b);
}

/* An ACCESS_HIST record of n bins. */
static inline void ht_access_hist(struct ht_buf *b, uint32_t ctx, uint32_t kind,
                                  const uint64_t *bins, uint32_t n)
{
    struct hpf_access_hist h = {.context_id = ctx, .kind = kind, .nbins = n};
    ht_begin(b, HPF_REC_ACCESS_HIST);
    ht_put(b, &h, sizeof h);
    ht_put(b, bins, n * sizeof *bins);
    ht_finish(b);
}

static inline void ht_end(struct ht_buf *b)
{
    struct hpf_end e = {.records = b->records};
    ht_record(b, HPF_REC_END, &e, sizeof e);
}

/* A small but complete profile: process, summary, two contexts with stacks, HIB and LIVE. */
static inline void ht_sample(struct ht_buf *b)
{
    static const char *const argv[] = {"./prog", "--flag", "x y"};
    struct hpf_process pr = {.pid = 1234, .ppid = 1, .start_unix_ns = 1000000000ull,
                             .dump_unix_ns = 3000000000ull, .dump_ms = 2000, .dump_seq = 0,
                             .dump_reason = HPF_DUMP_EXIT, .unwinder = HPF_UNWIND_FP,
                             .stack_depth = 64, .argc = 3};
    ht_file_header(b);
    ht_process_alloc(b, &pr, "glibc", "/usr/bin/prog", argv, "/lib/x86_64-linux-gnu/libc.so.6");
    struct hpf_summary s = {.total_allocs = 30, .total_frees = 25, .total_bytes = 4096,
                            .live_count = 5, .live_size = 500, .peak_live_size = 2048,
                            .peak_live_count = 9, .peak_ms = 1500, .contexts = 2,
                            .metadata_bytes = 65536, .metadata_budget = 1 << 20,
                            .metadata_resident = 32768};
    ht_record(b, HPF_REC_SUMMARY, &s, sizeof s);
    uint64_t pcs1[] = {0x401000, 0x401100};
    uint64_t pcs2[] = {0x402000};
    ht_stack(b, 1, pcs1, 2);
    ht_stack(b, 2, pcs2, 1);
    struct hpf_hib h1 = {.context_id = 1, .alloc_count = 10, .total_size = 1000, .min_size = 100,
                         .max_size = 100, .total_lifetime_ms = 50, .min_lifetime_ms = 1,
                         .max_lifetime_ms = 20};
    struct hpf_hib h2 = {.context_id = 2, .alloc_count = 20, .total_size = 3096, .min_size = 8,
                         .max_size = 2048, .total_lifetime_ms = 10, .min_lifetime_ms = 0,
                         .max_lifetime_ms = 5};
    ht_record(b, HPF_REC_HIB, &h1, sizeof h1);
    ht_record(b, HPF_REC_HIB, &h2, sizeof h2);
    struct hpf_live l1 = {.context_id = 1, .allocs = 10, .bytes = 1000, .live_count = 5,
                          .live_size = 500, .max_live_count = 6, .max_live_size = 600,
                          .peak_live_count = 4, .peak_live_size = 400, .first_alloc_ms = 3,
                          .last_alloc_ms = 1900};
    struct hpf_live l2 = {.context_id = 2, .allocs = 20, .bytes = 3096};
    ht_record(b, HPF_REC_LIVE, &l1, sizeof l1);
    ht_record(b, HPF_REC_LIVE, &l2, sizeof l2);
    ht_end(b);
}

/* Copies a buffer into a fresh malloc'ed block, as hr_profile_parse takes ownership. */
static inline uint8_t *ht_copy(const void *p, size_t n)
{
    uint8_t *c = malloc(n ? n : 1);
    if (!c)
        abort();
    memcpy(c, p, n);
    return c;
}

#endif
