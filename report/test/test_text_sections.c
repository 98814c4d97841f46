/* The sections of the text report (text_sections.c) on synthetic profiles written with
 * hpf_writer.h: each top-N section, the temporary allocations and the size buckets, checked
 * line for line, and the --sections list. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"
#include "hpf_writer.h"
#include "hr_output.h"
#include "hr_profile.h"

/* Every section before the listing, nothing after it. */
#define HT_SECTIONS_ONLY (HR_SECTION_CONTEXTS | HR_SECTION_ACCESS)

/* The text report of b from its first section on. */
static char *sections(struct ht_buf *b, size_t top, unsigned off)
{
    struct hr_profile p;
    char err[HR_ERR_MAX];
    ck_assert_msg(hr_profile_parse(&p, "s.hpf", ht_copy(b->data, b->len), b->len, err) == 0,
                  "%s", err);
    FILE *f = tmpfile();
    struct hr_profile *v = &p;
    struct hr_output_opts opts = {.sort = HR_SORT_TOTAL_SIZE, .top = top, .sections_off = off};
    ck_assert_int_eq(hr_write_text(f, &v, 1, &opts), 0);
    char *out = ht_slurp(f);
    fclose(f);
    hr_profile_free(&p);
    char *start = strstr(out, "bootstrap arena");
    ck_assert(start && (start = strchr(start, '\n')) && start[1] == '\n');
    char *r = strdup(start + 2);
    free(out);
    return r;
}

/* ht_sample: context 1 (10 blocks of 100 B, 5 leaked, 4 at the peak, lifetimes 1..20 ms) and
 * context 2 (20 blocks of 8 B to 2 KiB, all freed, 0.5 ms on average: temporary). */
START_TEST(sample_sections)
{
    struct ht_buf b = {0};
    ht_sample(&b);
    char *out = sections(&b, 20, HT_SECTIONS_ONLY);
    static const char *const c1 =
        "        size min 100 B, avg 100.0 B, max 100 B; lifetime min 1 ms, avg 5.0 ms, max 20 ms\n"
        "        at 0x401000 < 0x401100\n";
    static const char *const c2 =
        "        size min 8 B, avg 154.8 B, max 2.0 KiB; lifetime min 0 ms, avg 0.5 ms, max 5 ms\n"
        "        at 0x402000\n";
    char want[4096];
    snprintf(want, sizeof want,
             "top contexts by bytes allocated\n"
             "  #1  3.0 KiB (75.6%% of all bytes) in 20 allocations, context 2\n%s"
             "  #2  1000 B (24.4%% of all bytes) in 10 allocations, context 1\n%s\n"
             "top contexts by allocations\n"
             "  #1  20 allocations (66.7%% of all), 3.0 KiB, context 2\n%s"
             "  #2  10 allocations (33.3%% of all), 1000 B, context 1\n%s\n"
             "top contexts by bytes live at the peak\n"
             "  #1  400 B (19.5%% of the peak heap) in 4 blocks, context 1\n%s\n"
             "top contexts by leaked bytes (live at the dump)\n"
             "  #1  500 B (100.0%% of all leaked) in 5 blocks, context 1\n%s\n"
             "temporary allocations: 20 allocations (66.7%% of all), 3.0 KiB, from 1 context "
             "whose blocks lived under 1 ms on average\n"
             "  #1  20 allocations (66.7%% of all), 3.0 KiB, context 2\n%s\n"
             "allocation sizes: blocks by requested size, in power-of-two buckets\n"
             "  size                    allocations               bytes\n"
             "  [8 B, 16 B)                       1    3.3%%         8 B  ###\n"
             "  [16 B, 32 B)                      0    0.0%%         0 B\n"
             "  [32 B, 64 B)                     18   60.0%%     1.0 KiB  "
             "########################################\n"
             "  [64 B, 128 B)                    10   33.3%%      1000 B  "
             "#######################\n"
             "  [128 B, 256 B)                    0    0.0%%         0 B\n"
             "  [256 B, 512 B)                    0    0.0%%         0 B\n"
             "  [512 B, 1 KiB)                    0    0.0%%         0 B\n"
             "  [1 KiB, 2 KiB)                    0    0.0%%         0 B\n"
             "  [2 KiB, 4 KiB)                    1    3.3%%     2.0 KiB  ###\n"
             "  (1 context had blocks of several sizes besides the smallest and largest: those "
             "are counted at their average size)\n\n",
             c2, c1, c2, c1, c1, c1, c2);
    if (strcmp(out, want) != 0)
        fprintf(stderr, "got:\n%s\nwant:\n%s", out, want);
    ck_assert(strcmp(out, want) == 0);
    free(out);
    free(b.data);
}
END_TEST

/* --top 1 keeps one entry a section; the listing and its "top N of M" line follow. */
START_TEST(top_limits_entries)
{
    struct ht_buf b = {0};
    ht_sample(&b);
    char *out = sections(&b, 1, HR_SECTION_ACCESS);
    ck_assert(strstr(out, "  #1  3.0 KiB (75.6% of all bytes) in 20 allocations, context 2\n"));
    ck_assert(!strstr(out, "  #2  1000 B"));
    ck_assert(!strstr(out, "  #2  10 allocations"));
    char *listing = strstr(out, "top 1 of 2 contexts by total_size\n\n#1  context 2:");
    ck_assert(listing && strstr(out, "allocation sizes:") < listing);
    free(out);
    free(b.data);
}
END_TEST

/* A profile where nothing leaked, nothing was live at the peak, nothing is temporary. */
START_TEST(empty_sections_say_none)
{
    struct ht_buf b = {0};
    struct hpf_process pr = {.pid = 1, .argc = 0, .dump_reason = HPF_DUMP_EXIT};
    ht_file_header(&b);
    ht_process(&b, &pr, "glibc", "/bin/x", NULL);
    struct hpf_summary s = {.total_allocs = 3, .total_bytes = 300, .contexts = 1};
    ht_record(&b, HPF_REC_SUMMARY, &s, sizeof s);
    /* 3 blocks of 100 B held 9 ms in all: 3 ms each, not temporary */
    struct hpf_hib h = {.context_id = 7, .alloc_count = 3, .total_size = 300, .min_size = 100,
                        .max_size = 100, .total_lifetime_ms = 9, .min_lifetime_ms = 3,
                        .max_lifetime_ms = 3};
    ht_record(&b, HPF_REC_HIB, &h, sizeof h);
    ht_end(&b);
    char *out = sections(&b, 20, HT_SECTIONS_ONLY | HR_SECTION_BYTES | HR_SECTION_COUNT);
    ck_assert_msg(strcmp(out,
                         "top contexts by bytes live at the peak\n  (none)\n\n"
                         "top contexts by leaked bytes (live at the dump)\n  (none)\n\n"
                         "temporary allocations: 0 allocations (0.0% of all), 0 B, from 0 "
                         "contexts whose blocks lived under 1 ms on average\n\n"
                         "allocation sizes: blocks by requested size, in power-of-two buckets\n"
                         "  size                    allocations               bytes\n"
                         "  [64 B, 128 B)                     3  100.0%       300 B  "
                         "########################################\n\n") == 0,
                  "%s", out);
    free(out);
    free(b.data);
}
END_TEST

/* Size buckets: a block of 0 bytes, one block, two blocks (exact), and figures that do not
 * add up (placed at the average). */
START_TEST(size_buckets)
{
    struct ht_buf b = {0};
    struct hpf_process pr = {.pid = 1, .dump_reason = HPF_DUMP_EXIT};
    ht_file_header(&b);
    ht_process(&b, &pr, "glibc", "/bin/x", NULL);
    struct hpf_summary s = {.total_allocs = 6, .contexts = 4};
    ht_record(&b, HPF_REC_SUMMARY, &s, sizeof s);
    struct hpf_hib h[] = {
        {.context_id = 1, .alloc_count = 1, .total_size = 0},
        {.context_id = 2, .alloc_count = 1, .total_size = 1, .min_size = 1, .max_size = 1},
        {.context_id = 3, .alloc_count = 2, .total_size = 4097, .min_size = 1, .max_size = 4096},
        /* min + max above the total: damaged, all 2 at 10 B */
        {.context_id = 4, .alloc_count = 2, .total_size = 20, .min_size = 2, .max_size = 100},
    };
    for (size_t i = 0; i < 4; i++)
        ht_record(&b, HPF_REC_HIB, &h[i], sizeof h[i]);
    ht_end(&b);
    char *out = sections(&b, 20, ~HR_SECTION_SIZES);
    ck_assert_msg(strcmp(out,
                         "allocation sizes: blocks by requested size, in power-of-two buckets\n"
                         "  size                    allocations               bytes\n"
                         "  0 B                               1   16.7%         0 B  ####################\n"
                         "  [1 B, 2 B)                        2   33.3%         2 B  "
                         "########################################\n"
                         "  [2 B, 4 B)                        0    0.0%         0 B\n"
                         "  [4 B, 8 B)                        0    0.0%         0 B\n"
                         "  [8 B, 16 B)                       2   33.3%        20 B  "
                         "########################################\n"
                         "  [16 B, 32 B)                      0    0.0%         0 B\n"
                         "  [32 B, 64 B)                      0    0.0%         0 B\n"
                         "  [64 B, 128 B)                     0    0.0%         0 B\n"
                         "  [128 B, 256 B)                    0    0.0%         0 B\n"
                         "  [256 B, 512 B)                    0    0.0%         0 B\n"
                         "  [512 B, 1 KiB)                    0    0.0%         0 B\n"
                         "  [1 KiB, 2 KiB)                    0    0.0%         0 B\n"
                         "  [2 KiB, 4 KiB)                    0    0.0%         0 B\n"
                         "  [4 KiB, 8 KiB)                    1   16.7%     4.0 KiB  ####################\n\n") == 0,
                  "%s", out);
    free(out);
    free(b.data);
}
END_TEST

START_TEST(sections_list)
{
    unsigned off;
    ck_assert_int_eq(hr_sections_parse("all", &off), 0);
    ck_assert_uint_eq(off, 0);
    ck_assert_int_eq(hr_sections_parse("none", &off), 0);
    ck_assert_uint_eq(off, ~0u);
    ck_assert_int_eq(hr_sections_parse("bytes,sizes", &off), 0);
    ck_assert_uint_eq(~off, HR_SECTION_BYTES | HR_SECTION_SIZES);
    ck_assert_int_eq(hr_sections_parse("temporary,contexts,access", &off), 0);
    ck_assert_uint_eq(~off, HR_SECTION_TEMPORARY | HR_SECTION_CONTEXTS | HR_SECTION_ACCESS);
    ck_assert_int_eq(hr_sections_parse("count,peak,leaked", &off), 0);
    ck_assert_uint_eq(~off, HR_SECTION_COUNT | HR_SECTION_PEAK | HR_SECTION_LEAKED);
    ck_assert_int_eq(hr_sections_parse("", &off), -1);
    ck_assert_int_eq(hr_sections_parse("bytes,", &off), -1);
    ck_assert_int_eq(hr_sections_parse("byte", &off), -1);
    ck_assert_int_eq(hr_sections_parse("bytes,,count", &off), -1);
}
END_TEST

int main(void)
{
    TCase *tc = ht_tcase("report_text_sections", "sections", 0);
    tcase_add_test(tc, sample_sections);
    tcase_add_test(tc, top_limits_entries);
    tcase_add_test(tc, empty_sections_say_none);
    tcase_add_test(tc, size_buckets);
    tcase_add_test(tc, sections_list);
    return ht_run();
}
