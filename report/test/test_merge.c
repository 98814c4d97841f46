/* Unit tests of HIB merging: several records of one context (evicted ones, then the final one)
 * must add up to known totals, minima, maxima and "last block" fields, and contexts with only
 * a LIVE record must still appear, with zeros. */
#include <check.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"
#include "hpf_writer.h"
#include "hr_output.h"
#include "hr_profile.h"

static const struct hpf_hib rec_a = {
    .context_id = 9, .flags = HPF_HIB_EVICTED, .alloc_count = 3, .total_size = 300,
    .min_size = 50, .max_size = 150, .total_lifetime_ms = 30, .min_lifetime_ms = 5,
    .max_lifetime_ms = 20, .total_access_count = 9, .min_access_count = 1,
    .max_access_count = 5, .total_percent_utilized = 150, .min_percent_utilized = 10,
    .max_percent_utilized = 90, .alloc_timestamp_ms = 100, .dealloc_timestamp_ms = 200,
    .alloc_cpu_id = 1, .dealloc_cpu_id = 2, .num_migrated_cpu = 1, .num_lifetime_overlaps = 2,
    .num_same_alloc_cpu = 3, .num_same_dealloc_cpu = 1};

/* Saw no block: its minima are garbage and must not win. */
static const struct hpf_hib rec_b = {
    .context_id = 9, .flags = HPF_HIB_EVICTED, .min_size = 0, .min_lifetime_ms = 0,
    .min_access_count = 0, .min_percent_utilized = 0, .dealloc_timestamp_ms = 50,
    .alloc_cpu_id = 77, .dealloc_cpu_id = 77};

static const struct hpf_hib rec_c = {
    .context_id = 9, .flags = HPF_HIB_LIVE_FOLDED, .alloc_count = 2, .total_size = 40,
    .min_size = 10, .max_size = 30, .total_lifetime_ms = 100, .min_lifetime_ms = 40,
    .max_lifetime_ms = 60, .total_access_count = 4, .min_access_count = 2,
    .max_access_count = 2, .total_percent_utilized = 200, .min_percent_utilized = 100,
    .max_percent_utilized = 100, .alloc_timestamp_ms = 150, .dealloc_timestamp_ms = 180,
    .alloc_cpu_id = 3, .dealloc_cpu_id = 4, .num_migrated_cpu = 2, .num_lifetime_overlaps = 0,
    .num_same_alloc_cpu = 1, .num_same_dealloc_cpu = 2};

static void check_merged(const struct hpf_hib *h)
{
    ck_assert_uint_eq(h->alloc_count, 5);
    ck_assert_uint_eq(h->total_size, 340);
    ck_assert_uint_eq(h->min_size, 10);
    ck_assert_uint_eq(h->max_size, 150);
    ck_assert_uint_eq(h->total_lifetime_ms, 130);
    ck_assert_uint_eq(h->min_lifetime_ms, 5);
    ck_assert_uint_eq(h->max_lifetime_ms, 60);
    ck_assert_uint_eq(h->total_access_count, 13);
    ck_assert_uint_eq(h->min_access_count, 1);
    ck_assert_uint_eq(h->max_access_count, 5);
    ck_assert_uint_eq(h->total_percent_utilized, 350);
    ck_assert_uint_eq(h->min_percent_utilized, 10);
    ck_assert_uint_eq(h->max_percent_utilized, 100);
    /* last-block fields from rec_a, which has the latest deallocation (200 ms) */
    ck_assert_uint_eq(h->alloc_timestamp_ms, 100);
    ck_assert_uint_eq(h->dealloc_timestamp_ms, 200);
    ck_assert_uint_eq(h->alloc_cpu_id, 1);
    ck_assert_uint_eq(h->dealloc_cpu_id, 2);
    ck_assert_uint_eq(h->num_migrated_cpu, 3);
    ck_assert_uint_eq(h->num_lifetime_overlaps, 2);
    ck_assert_uint_eq(h->num_same_alloc_cpu, 4);
    ck_assert_uint_eq(h->num_same_dealloc_cpu, 3);
}

START_TEST(merge_function_every_order)
{
    const struct hpf_hib *recs[3] = {&rec_a, &rec_b, &rec_c};
    static const int orders[6][3] = {{0, 1, 2}, {0, 2, 1}, {1, 0, 2},
                                     {1, 2, 0}, {2, 0, 1}, {2, 1, 0}};
    for (int o = 0; o < 6; o++) {
        struct hpf_hib acc = *recs[orders[o][0]];
        hr_hib_merge(&acc, recs[orders[o][1]]);
        hr_hib_merge(&acc, recs[orders[o][2]]);
        check_merged(&acc);
    }
}
END_TEST

/* A profile where context 9 has three HIB records, context 4 only a LIVE record and context 6
 * one HIB that saw no blocks. */
static void build(struct ht_buf *b)
{
    ht_file_header(b);
    struct hpf_process pr = {.pid = 1, .argc = 0};
    ht_process(b, &pr, "glibc", "/bin/x", NULL);
    struct hpf_summary s = {.contexts = 3};
    ht_record(b, HPF_REC_SUMMARY, &s, sizeof s);
    ht_record(b, HPF_REC_HIB, &rec_b, sizeof rec_b);
    struct hpf_live l4 = {.context_id = 4, .allocs = 2, .bytes = 64, .live_count = 2,
                          .live_size = 64, .max_live_count = 2, .max_live_size = 64};
    ht_record(b, HPF_REC_LIVE, &l4, sizeof l4);
    ht_record(b, HPF_REC_HIB, &rec_a, sizeof rec_a);
    struct hpf_hib h6 = {.context_id = 6, .min_size = UINT64_MAX, .min_lifetime_ms = 123,
                         .min_percent_utilized = 100};
    ht_record(b, HPF_REC_HIB, &h6, sizeof h6);
    ht_record(b, HPF_REC_HIB, &rec_c, sizeof rec_c);
    ht_end(b);
}

START_TEST(merge_in_profile)
{
    struct ht_buf b = {0};
    build(&b);
    struct hr_profile p;
    char err[HR_ERR_MAX];
    ck_assert_msg(hr_profile_parse(&p, "m.hpf", ht_copy(b.data, b.len), b.len, err) == 0, "%s",
                  err);
    ck_assert_uint_eq(p.ncontexts, 3);
    struct hr_context *c = hr_context_find(&p, 9);
    check_merged(&c->hib);
    ck_assert_uint_eq(c->hib.flags, HPF_HIB_EVICTED | HPF_HIB_LIVE_FOLDED);
    struct hr_context *c4 = hr_context_find(&p, 4);
    ck_assert(!c4->has_hib && c4->has_live);
    ck_assert_uint_eq(c4->hib.alloc_count, 0);
    ck_assert_uint_eq(c4->hib.context_id, 4);
    hr_profile_free(&p);
    free(b.data);
}
END_TEST

START_TEST(merged_json)
{
    struct ht_buf b = {0};
    build(&b);
    struct hr_profile p;
    char err[HR_ERR_MAX];
    ck_assert(hr_profile_parse(&p, "m.hpf", ht_copy(b.data, b.len), b.len, err) == 0);
    FILE *f = tmpfile();
    struct hr_profile *v[1] = {&p};
    struct hr_output_opts opts = {.sort = HR_SORT_TOTAL_SIZE};
    ck_assert_int_eq(hr_write_json(f, v, 1, &opts), 0);
    char *out = ht_slurp(f);
    fclose(f);
    /* context 9 first (total 340), then 4 and 6 (both 0) by id */
    char *c9 = strstr(out, "\"context_id\": 9,");
    char *c4 = strstr(out, "\"context_id\": 4,");
    char *c6 = strstr(out, "\"context_id\": 6,");
    ck_assert(c9 && c4 && c6 && c9 < c4 && c4 < c6);
    ck_assert(strstr(c9, "\"total_size\": 340,"));
    ck_assert(strstr(c9, "\"num_same_dealloc_cpu\": 3,"));
    /* LIVE-only context: zeros from the HIB side, its live numbers, no frames */
    ck_assert(strstr(c4, "\"alloc_count\": 0,") < c6);
    ck_assert(strstr(c4, "\"live_size\": 64,") < c6);
    ck_assert(strstr(c4, "\"frames\": []") < c6);
    /* a HIB that saw nothing prints 0 minima whatever it stored */
    ck_assert(strstr(c6, "\"min_size\": 0,"));
    ck_assert(strstr(c6, "\"min_lifetime_ms\": 0,"));
    ck_assert(strstr(c6, "\"min_percent_utilized\": 0,"));
    free(out);
    hr_profile_free(&p);
    free(b.data);
}
END_TEST

int main(void)
{
    TCase *tc = ht_tcase("report_merge", "merge", 0);
    tcase_add_test(tc, merge_function_every_order);
    tcase_add_test(tc, merge_in_profile);
    tcase_add_test(tc, merged_json);
    return ht_run();
}
