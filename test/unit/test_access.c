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
    struct hpf_access_words words;
    uint64_t hist[4][5][1024]; /* per kind 1..3, per context id 1..4 */
    uint32_t nbins[4][5];
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
            ck_assert_uint_eq(rh.size, sizeof g->acc + g->acc.nmodules * sizeof g->mods[0] +
                                           sizeof g->words);
            ck_assert_uint_le(g->acc.nmodules, 4);
            memcpy(g->mods, p + sizeof g->acc, g->acc.nmodules * sizeof g->mods[0]);
            memcpy(&g->words, p + sizeof g->acc + g->acc.nmodules * sizeof g->mods[0],
                   sizeof g->words);
        } else if (rh.type == HPF_REC_ACCESS_HIST) {
            struct hpf_access_hist h;
            memcpy(&h, p, sizeof h);
            ck_assert_uint_eq(rh.size, sizeof h + h.nbins * 8);
            ck_assert_uint_ge(h.kind, HPF_HIST_GRANULE);
            ck_assert_uint_le(h.kind, HPF_HIST_WORD_SATURATED);
            ck_assert_uint_lt(h.context_id, 5);
            ck_assert_uint_gt(h.nbins, 0);
            ck_assert_uint_eq(g->nbins[h.kind][h.context_id], 0); /* one record a kind */
            memcpy(g->hist[h.kind][h.context_id], p + sizeof h, h.nbins * 8);
            g->nbins[h.kind][h.context_id] = h.nbins;
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
    struct hp_attach b = {HP_ATTACH_VERSION, sizeof b, HP_MODE_INLINE, 1, &module_b, 0, 0, 0};
    ck_assert_int_eq(hp_shadow_attach(&a), 0);
    ck_assert_int_eq(hp_shadow_attach(&b), 0);
    struct hp_ctx *c1 = new_ctx(1), *c2 = new_ctx(2);
    new_ctx(3); /* no access state: no histogram */
    /* Context 4: a block in the registry made after the thread caches were flushed, its
     * context's live count still 0: no live HIB, so no live bins either. */
    struct hp_ctx *c4 = new_ctx(4);
    char *late = aligned_alloc(64, 64);
    hp_shadow_clear(&hp_shadow, (uintptr_t)late, 64);
    hp_shadow_live_add((uintptr_t)late, 64, 4);
    loads(late, 9);
    ck_assert_ptr_nonnull(hp_profile_hist(4, 1));

    /* Context 1: a live block of 256 bytes on a 64-byte boundary (4 granules), granules 0 and
     * 2 touched; one of 600 bytes (10 granules: past the 8 bins, no histogram) with a store. */
    char *x = aligned_alloc(64, 256), *big = aligned_alloc(64, 640);
    hp_shadow_clear(&hp_shadow, (uintptr_t)x, 256);
    hp_shadow_clear(&hp_shadow, (uintptr_t)big, 600);
    hp_shadow_live_add((uintptr_t)x, 256, 1);
    uint32_t big_ref = hp_shadow_live_add((uintptr_t)big, 600, 1);
    c1->live_count = 2;
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
    /* No word plane (word histograms off in this test's options): the trailer says so. */
    ck_assert_uint_eq(g.words.word, 0);
    ck_assert_uint_eq(g.words.counter_max, HP_WORD_MAX);
    /* Histograms: freed + live, cut after the last bin that is not 0. */
    ck_assert_int_eq(g.hist_records, 2);
    ck_assert_uint_eq(g.nbins[HPF_HIST_GRANULE][1], 4);
    ck_assert_uint_eq(g.hist[HPF_HIST_GRANULE][1][0], 15);
    ck_assert_uint_eq(g.hist[HPF_HIST_GRANULE][1][1], 0);
    ck_assert_uint_eq(g.hist[HPF_HIST_GRANULE][1][2], 2);
    ck_assert_uint_eq(g.hist[HPF_HIST_GRANULE][1][3], 1);
    ck_assert_uint_eq(g.nbins[HPF_HIST_GRANULE][2], 2);
    ck_assert_uint_eq(g.hist[HPF_HIST_GRANULE][2][1], 7);
    ck_assert_uint_eq(g.nbins[HPF_HIST_GRANULE][3], 0);
    ck_assert_uint_eq(c4->live_count, 0);
    ck_assert_uint_eq(g.nbins[HPF_HIST_GRANULE][4], 0); /* no record: every bin 0 */
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
    c1->live_count = 1;
    dump(&g);
    ck_assert_uint_eq(g.hist[HPF_HIST_GRANULE][1][0], 16);
    memset(&h, 0, sizeof h);
    hp_access_fold_into(c1, &h, 1);
    ck_assert_uint_eq(h.total_access_count, 8);
    ck_assert_uint_eq(h.min_access_count, 8);
    free(x);
    free(big);
    free(late);
}
END_TEST

/* Per-word histograms in a dump: freed blocks' words (hp_shadow_word_take at their frees) plus
 * the live blocks' of the dump, and the saturation counts beside them. */
START_TEST(test_word_records)
{
    hp_options_parse(&hp_opt, "verbosity=0:access_hist_granules=8:access_word_hist_max=64");
    hp_clock_init();
    hp_meta_init(64u << 20);
    hp_profile_init(hp_spool_hib);
    hp_init_state = HP_INIT_DONE;
    ck_assert_uint_eq(hp_word_bins, 8);
    hp_shadow_word_max = 64;
    static int module;
    struct hp_attach a = {HP_ATTACH_VERSION, sizeof a, HP_MODE_CALLBACKS, 1, &module, 0, 0, 0};
    ck_assert_int_eq(hp_shadow_attach(&a), 0);
    ck_assert_uint_ne(hp_shadow.hbase, 0);
    new_ctx(3); /* an access state made before per-word histograms were on: none for it */
    hp_profile_hists(3)[0] = 1;
    hp_word_hists_on = 1; /* what core/'s attach does when there is a word plane */
    new_ctx(1)->live_count = 1; /* l, below */
    new_ctx(2)->live_count = 1; /* u */
    /* Context 1: a freed block of 24 bytes (3 words) ... */
    uint64_t *f = aligned_alloc(32, 32), *l = aligned_alloc(32, 64);
    hp_shadow_word_arm(&hp_shadow, (uintptr_t)f, 24);
    hp_shadow_word_bump(hp_shadow.hbase, (uintptr_t)&f[0]);
    hp_shadow_word_bump(hp_shadow.hbase, (uintptr_t)&f[2]);
    struct hp_word_hist w1 = hp_hist_words(hp_profile_hists(1));
    hp_shadow_word_take(&hp_shadow, (uintptr_t)f, 24, w1.freed, w1.freed_sat, hp_word_bins);
    /* ... and a live one of 64 bytes with word 1 saturated, word 6 touched once. */
    hp_shadow_word_arm(&hp_shadow, (uintptr_t)l, 64);
    hp_shadow_live_add((uintptr_t)l, 64, 1);
    for (int i = 0; i < 1000; i++)
        hp_shadow_word_bump(hp_shadow.hbase, (uintptr_t)&l[1]);
    hp_shadow_word_bump(hp_shadow.hbase, (uintptr_t)&l[6]);
    /* Context 2: a live block whose words nobody touched: no word records. */
    uint64_t *u = aligned_alloc(32, 32);
    hp_shadow_word_arm(&hp_shadow, (uintptr_t)u, 32);
    hp_shadow_live_add((uintptr_t)u, 32, 2);
    *hp_shadow_ctr(hp_shadow.base, (uintptr_t)u) += 1; /* a granule access: granule record only */

    struct got g;
    dump(&g);
    ck_assert_uint_eq(g.words.word, 8);
    ck_assert_uint_eq(g.words.max_size, 64);
    ck_assert_uint_eq(g.words.counter_max, HP_WORD_MAX);
    ck_assert_uint_eq(g.nbins[HPF_HIST_WORD][1], 7);
    uint64_t want[7] = {1, HP_WORD_MAX, 1, 0, 0, 0, 1};
    for (int i = 0; i < 7; i++)
        ck_assert_uint_eq(g.hist[HPF_HIST_WORD][1][i], want[i]);
    ck_assert_uint_eq(g.nbins[HPF_HIST_WORD_SATURATED][1], 2);
    ck_assert_uint_eq(g.hist[HPF_HIST_WORD_SATURATED][1][0], 0);
    ck_assert_uint_eq(g.hist[HPF_HIST_WORD_SATURATED][1][1], 1);
    ck_assert_uint_eq(g.nbins[HPF_HIST_WORD][2], 0);
    ck_assert_uint_eq(g.nbins[HPF_HIST_WORD_SATURATED][2], 0);
    ck_assert_uint_eq(g.nbins[HPF_HIST_GRANULE][2], 1);
    ck_assert_uint_eq(g.nbins[HPF_HIST_GRANULE][3], 1);
    ck_assert_uint_eq(g.nbins[HPF_HIST_WORD][3], 0);
    ck_assert_ptr_null(hp_hist_words(hp_profile_hists(3)).freed);
    /* The next dump: live words read afresh (not added to the last dump's), freed ones kept. */
    hp_shadow_word_bump(hp_shadow.hbase, (uintptr_t)&l[6]);
    dump(&g);
    ck_assert_uint_eq(g.hist[HPF_HIST_WORD][1][6], 2);
    ck_assert_uint_eq(g.hist[HPF_HIST_WORD][1][0], 1);
    ck_assert_uint_eq(g.hist[HPF_HIST_WORD_SATURATED][1][1], 1);
    free(f);
    free(l);
    free(u);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("access");
    TCase *tc = tcase_create("dump");
    tcase_add_test(tc, test_nothing_without_shadow);
    tcase_add_test(tc, test_access_records);
    tcase_add_test(tc, test_word_records);
    suite_add_tcase(s, tc);
    return hp_unit_run(s);
}
