/* Test helper: a large synthetic profile shaped like a program's (test_html.c and
 * gen_big_profile.c): contexts with stacks of 24 frames in one module without a file on disk,
 * the outer 16 frames from a binary call tree folded into 2,000 addresses per level, the inner
 * 8 from 300 functions in any order. */
#ifndef HT_BIG_PROFILE_H
#define HT_BIG_PROFILE_H

#include "hpf_writer.h"

static inline void ht_big_profile(struct ht_buf *b, uint32_t nctx)
{
    enum { DEPTH = 24, NPCS = 2000 };
    static const char *const argv[] = {"./big"};
    struct hpf_process pr = {.pid = 9, .argc = 1, .dump_reason = HPF_DUMP_EXIT};
    ht_file_header(b);
    ht_process(b, &pr, "glibc", "/big", argv);
    struct hpf_summary s = {.contexts = nctx};
    ht_record(b, HPF_REC_SUMMARY, &s, sizeof s);
    struct hpf_segment seg = {.start = 0x500000, .end = 0x500000 + 16u * NPCS * DEPTH, .prot = 5};
    ht_module(b, 0x400000, &seg, 1, NULL, 0, "/nonexistent/big");
    uint32_t x = 12345;
    for (uint32_t id = 1; id <= nctx; id++) {
        uint64_t pcs[DEPTH];
        uint32_t path = 0;
        for (int k = DEPTH; k-- > 0;) { /* pcs are innermost first */
            x = x * 1103515245u + 12345u;
            uint32_t pick = (x >> 8) % (k >= 8 ? 2u : 300u);
            path = k >= 8 ? path * 2 + pick : pick;
            pcs[k] = 0x500000 + 16u * (path % NPCS) + 16u * NPCS * (uint32_t)k;
        }
        ht_stack(b, id, pcs, DEPTH);
        struct hpf_hib h = {.context_id = id, .alloc_count = id % 97 + 1,
                            .total_size = (id % 97 + 1) * (id % 4096 + 1),
                            .min_size = id % 4096 + 1, .max_size = id % 4096 + 1};
        ht_record(b, HPF_REC_HIB, &h, sizeof h);
    }
    ht_end(b);
}

#endif
