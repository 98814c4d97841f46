/* Unit tests for the access part of a dump (shim/dump/access.c) over a real shadow: the ACCESS
 * record, live blocks' figures read through the registry and folded into their contexts'
 * HIBs, and ACCESS_HIST records that add the freed blocks' histogram to the live ones'. The
 * records written are decoded here, independently of the report tool. */
#include "unit_support.h"

#include "core/core.h"
#include "dump/dump.h"
#include "format/format.h"
#include "profile/profile.h"
#include "rt/rt.h"
#include "shadow/attach.h"
#include "shadow/shadow.h"

#include <stdint.h>
#include <stdio.h>
#include <string.h>

void hp_test_write_access(int fd);
void hp_access_fold_into(const struct hp_ctx *c, struct hpf_hib *h, int64_t lc);

static void init(void)
{
    hp_options_parse(&hp_opt, "verbosity=0:access_hist_granules=8");
    hp_clock_init();
    hp_meta_init(64u << 20);
    hp_profile_init(hp_spool_hib);
    hp_init_state = HP_INIT_DONE;
}

static struct hp_ctx *new_ctx(uint32_t id)
{
    struct hp_ctx *c = calloc(1, sizeof *c);
    ck_assert_ptr_nonnull(c);
    c->id = id;
    c->allocs = 1;
    hp_prof.by_id[id] = c;
    if (hp_prof.next_id <= id)
        hp_prof.next_id = id + 1;
    return c;
}

/* What instrumented code does: n loads (plane 0) or stores (planes 0 and 1) at a. */
static void loads(const void *a, uint64_t n) { *hp_shadow_ctr(hp_shadow.base, (uintptr_t)a) += n; }
static void stores(const void *a, uint64_t n)
{
    loads(a, n);
    *hp_shadow_ctr(hp_shadow.wbase, (uintptr_t)a) += n;
}

/* ---------- decoding ---------- */

struct got {
    int access_records;
    struct hpf_access acc;
    struct hpf_access_module mods[4];
    uint64_t hist[4][1024]; /* per context id 1..3 */
    uint32_t nbins[4];
    int hist_records;
};

static void decode(FILE *f, struct got *g)
{
    memset(g, 0, sizeof *g);
    fflush(f);
    long len = ftell(f);
    uint8_t *buf = malloc((size_t)len);
    ck_assert_ptr_nonnull(buf);
    rewind(f);
    ck_assert_uint_eq(fread(buf, 1, (size_t)len, f), (size_t)len);
    for (long off = 0; off < len;) {
        struct hpf_record_header rh;
        memcpy(&rh, buf + off, sizeof rh);
        const uint8_t *p = buf + off + sizeof rh;
        if (rh.type == HPF_REC_ACCESS) {
            g->access_records++;
            memcpy(&g->acc, p, sizeof g->acc);
            ck_assert_uint_eq(rh.size, sizeof g->acc + g->acc.nmodules * sizeof g->mods[0]);
            ck_assert_uint_le(g->acc.nmodules, 4);
            memcpy(g->mods, p + sizeof g->acc, g->acc.nmodules * sizeof g->mods[0]);
        } else if (rh.type == HPF_REC_ACCESS_HIST) {
            struct hpf_access_hist h;
            memcpy(&h, p, sizeof h);
            ck_assert_uint_eq(rh.size, sizeof h + h.nbins * 8);
            ck_assert_uint_eq(h.kind, HPF_HIST_GRANULE);
            ck_assert_uint_lt(h.context_id, 4);
            ck_assert_uint_gt(h.nbins, 0);
            memcpy(g->hist[h.context_id], p + sizeof h, h.nbins * 8);
            g->nbins[h.context_id] = h.nbins;
            g->hist_records++;
        } else {
            ck_abort_msg("unexpected record type %u", rh.type);
        }
        off += (long)(sizeof rh + ((rh.size + 7) & ~(uint64_t)7));
    }
    free(buf);
}

static void dump(struct got *g)
{
    FILE *f = tmpfile();
    ck_assert_ptr_nonnull(f);
    hp_test_write_access(fileno(f));
    fseek(f, 0, SEEK_END);
    decode(f, g);
    fclose(f);
}

/* ---------- tests ---------- */

START_TEST(test_nothing_without_shadow)
{
    init();
    new_ctx(1);
    struct got g;
    dump(&g);
    ck_assert_int_eq(g.access_records, 0);
    ck_assert_int_eq(g.hist_records, 0);
}
END_TEST

START_TEST(test_access_records)
{
    init();
    static int module_a, module_b;
    struct hp_attach a = {HP_ATTACH_VERSION, sizeof a, HP_MODE_CALLBACKS, 1, &module_a, 0, 0, 0};
    struct hp_attach b = {HP_ATTACH_VERSION, sizeof b, HP_MODE_INLINE, 1, &module_b, 0, 0};
    ck_assert_int_eq(hp_shadow_attach(&a), 0);
    ck_assert_int_eq(hp_shadow_attach(&b), 0);
    struct hp_ctx *c1 = new_ctx(1), *c2 = new_ctx(2);
    new_ctx(3); /* no access state: no histogram */

    /* Context 1: a live block of 256 bytes on a 64-byte boundary (4 granules), granules 0 and
     * 2 touched; one of 600 bytes (10 granules: past the 8 bins, no histogram) with a store. */
    char *x = aligned_alloc(64, 256), *big = aligned_alloc(64, 640);
    hp_shadow_clear(&hp_shadow, (uintptr_t)x, 256);
    hp_shadow_clear(&hp_shadow, (uintptr_t)big, 600);
    hp_shadow_live_add((uintptr_t)x, 256, 1);
    uint32_t big_ref = hp_shadow_live_add((uintptr_t)big, 600, 1);
    loads(x, 5);
    stores(x + 130, 2);
    stores(big + 599, 1);
    /* Its freed blocks' histogram: what hp_shadow_take added at their frees. */
    uint64_t *h1 = hp_profile_hist(1, 4);
    ck_assert_ptr_nonnull(h1);
    h1[0] = 10;
    h1[3] = 1;
    /* Context 2: freed blocks only. */
    hp_profile_hist(2, 1)[1] = 7;

    struct got g;
    dump(&g);
    ck_assert_int_eq(g.access_records, 1);
    ck_assert_uint_eq(g.acc.modes, HPF_ACCESS_CALLBACKS | HPF_ACCESS_INLINE);
    ck_assert_uint_eq(g.acc.granule, 64);
    ck_assert_uint_eq(g.acc.hist_bins, 8);
    ck_assert_uint_eq(g.acc.nmodules, 2);
    ck_assert_uint_eq(g.mods[0].addr, (uintptr_t)&module_a);
    ck_assert_uint_eq(g.mods[0].mode, HPF_ACCESS_CALLBACKS);
    ck_assert_uint_eq(g.mods[1].addr, (uintptr_t)&module_b);
    ck_assert_uint_eq(g.mods[1].mode, HPF_ACCESS_INLINE);
    /* Histograms: freed + live, cut after the last bin that is not 0. */
    ck_assert_int_eq(g.hist_records, 2);
    ck_assert_uint_eq(g.nbins[1], 4);
    ck_assert_uint_eq(g.hist[1][0], 15);
    ck_assert_uint_eq(g.hist[1][1], 0);
    ck_assert_uint_eq(g.hist[1][2], 2);
    ck_assert_uint_eq(g.hist[1][3], 1);
    ck_assert_uint_eq(g.nbins[2], 2);
    ck_assert_uint_eq(g.hist[2][1], 7);
    ck_assert_uint_eq(g.nbins[3], 0);
    /* The live fold of context 1 with its two live blocks. */
    struct hpf_hib h;
    memset(&h, 0, sizeof h);
    hp_access_fold_into(c1, &h, 2);
    ck_assert_uint_eq(h.total_access_count, 8);
    ck_assert_uint_eq(h.min_access_count, 1);
    ck_assert_uint_eq(h.max_access_count, 7);
    ck_assert_uint_eq(h.total_write_count, 3);
    ck_assert_uint_eq(h.min_write_count, 1);
    ck_assert_uint_eq(h.max_write_count, 2);
    ck_assert_uint_eq(h.max_percent_utilized, 50); /* 2 of 4 granules */
    ck_assert_uint_eq(h.min_percent_utilized, 10); /* 1 of 10 */
    ck_assert_uint_eq(h.total_percent_utilized, 60);
    /* With a third live block the registry did not know: it counts as one of no accesses. */
    hp_access_fold_into(c1, &h, 3);
    ck_assert_uint_eq(h.total_access_count, 8);
    ck_assert_uint_eq(h.min_access_count, 0);
    ck_assert_uint_eq(h.min_write_count, 0);
    ck_assert_uint_eq(h.min_percent_utilized, 0);
    /* Context 2 has no live block: nothing folded. */
    memset(&h, 0, sizeof h);
    hp_access_fold_into(c2, &h, 1);
    ck_assert_uint_eq(h.total_access_count, 0);

    /* The next dump reads the live blocks afresh: their counts as they are then, not added to
     * the last dump's. The big block is freed meanwhile (the registry lets go of it). */
    loads(x, 1);
    hp_shadow_live_del(big_ref, (uintptr_t)big);
    dump(&g);
    ck_assert_uint_eq(g.hist[1][0], 16);
    memset(&h, 0, sizeof h);
    hp_access_fold_into(c1, &h, 1);
    ck_assert_uint_eq(h.total_access_count, 8);
    ck_assert_uint_eq(h.min_access_count, 8);
    free(x);
    free(big);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("access");
    TCase *tc = tcase_create("dump");
    tcase_add_test(tc, test_nothing_without_shadow);
    tcase_add_test(tc, test_access_records);
    suite_add_tcase(s, tc);
    return hp_unit_run(s);
}
