/* Unit tests of the DHAT output: the fields dh_view.js requires, the figures of each program
 * point, the frame table, contexts with one stack merged, the per-byte access counts derived
 * from access histograms (both granule offsets), a diff's two sides, and the command line. */
#include <check.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"
#include "hpf_writer.h"
#include "hr_cli.h"
#include "hr_output.h"
#include "hr_profile.h"
#include "json_check.h"

static struct hr_profile *parse_buf(struct ht_buf *b)
{
    struct hr_profile *p = calloc(1, sizeof *p);
    char err[HR_ERR_MAX];
    ck_assert_msg(hr_profile_parse(p, "t.hpf", ht_copy(b->data, b->len), b->len, err) == 0, "%s", err);
    return p;
}

static char *to_dhat(struct ht_buf *b)
{
    struct hr_profile *p = parse_buf(b);
    FILE *f = tmpfile();
    struct hr_output_opts opts = {.sort = HR_SORT_TOTAL_SIZE};
    ck_assert_int_eq(hr_write_dhat(f, p, &opts), 0);
    char *out = ht_slurp(f);
    fclose(f);
    hr_profile_free(p);
    free(p);
    ck_assert_msg(ht_json_valid(out), "invalid JSON:\n%s", out);
    return out;
}

/* How many times needle occurs in s. */
static int count(const char *s, const char *needle)
{
    int n = 0;
    for (const char *q = s; (q = strstr(q, needle)); q++)
        n++;
    return n;
}

START_TEST(fields_and_figures)
{
    struct ht_buf b = {0};
    ht_sample(&b);
    char *out = to_dhat(&b);
    static const char *const top[] = {
        "{\"dhatFileVersion\":2,\n", "\"mode\":\"heap\",\n", "\"verb\":\"Allocated\",\n",
        "\"bklt\":true,\n", "\"bkacc\":false,\n", "\"tu\":\"\xc2\xb5s\",\n", "\"Mtu\":\"s\",\n",
        "\"tuth\":1000,\n", "\"cmd\":\"./prog --flag x y\",\n", "\"pid\":1234,\n",
        "\"te\":2000000,\n", "\"tg\":1500000,\n", "\"pps\":[", "\"ftbl\":[\n\"[root]\""};
    for (size_t i = 0; i < sizeof top / sizeof top[0]; i++)
        ck_assert_msg(strstr(out, top[i]), "no %s in\n%s", top[i], out);
    /* context 1: LIVE figures, lifetimes in microseconds; no access fields without data */
    ck_assert_msg(strstr(out, "{\"tb\":1000,\"tbk\":10,\"tl\":50000,\"mb\":600,\"mbk\":6,"
                              "\"gb\":400,\"gbk\":4,\"eb\":500,\"ebk\":5,\"fs\":[2,3]}"), "%s", out);
    ck_assert(strstr(out, "{\"tb\":3096,\"tbk\":20,\"tl\":10000,\"mb\":0,\"mbk\":0,"
                          "\"gb\":0,\"gbk\":0,\"eb\":0,\"ebk\":0,\"fs\":[1]}"));
    ck_assert(!strstr(out, "\"rb\""));
    /* frames of no module: address and ???; program points in stack order (shorter first) */
    ck_assert(strstr(out, "\"[root]\",\n\"0x402000: ???\",\n\"0x401000: ???\",\n\"0x401100: ???\"\n]"));
    free(out);
    free(b.data);
}
END_TEST

/* A profile of contexts 1 and 2 with one stack, their LIVE records l1 and l2, and context 3
 * (no figures) with a shorter one, as DHAT. */
static char *two_on_one_stack(const struct hpf_live *l1, const struct hpf_live *l2)
{
    struct ht_buf b = {0};
    struct hpf_process pr = {.pid = 7, .dump_ms = 0, .argc = 0};
    ht_file_header(&b);
    ht_process(&b, &pr, "glibc", "/bin/x", NULL);
    struct hpf_summary sum = {.total_allocs = 5};
    ht_record(&b, HPF_REC_SUMMARY, &sum, sizeof sum);
    uint64_t pcs[] = {0x1000, 0x2000};
    ht_stack(&b, 1, pcs, 2);
    ht_stack(&b, 2, pcs, 2);
    ht_stack(&b, 3, pcs, 1);
    ht_record(&b, HPF_REC_LIVE, l1, sizeof *l1);
    ht_record(&b, HPF_REC_LIVE, l2, sizeof *l2);
    ht_end(&b);
    char *out = to_dhat(&b);
    free(b.data);
    return out;
}

/* Two contexts with the same stack: the viewer refuses repeated frames, so one program point
 * with their sums. A context without any figure has none. */
START_TEST(same_stack_merged)
{
    struct hpf_live l1 = {.context_id = 1, .allocs = 2, .bytes = 64, .live_count = 1, .live_size = 32};
    struct hpf_live l2 = {.context_id = 2, .allocs = 3, .bytes = 30};
    char *out = two_on_one_stack(&l1, &l2);
    ck_assert_int_eq(count(out, "\"tb\":"), 1);
    ck_assert_msg(strstr(out, "{\"tb\":94,\"tbk\":5,\"tl\":0,\"mb\":0,\"mbk\":0,\"gb\":0,\"gbk\":0,"
                              "\"eb\":32,\"ebk\":1,\"fs\":[1,2]}"), "%s", out);
    /* a program that ran under a tick still has a duration for the viewer's rates */
    ck_assert(strstr(out, "\"te\":1000,\n"));
    ck_assert(strstr(out, "\"cmd\":\"\",\n"));
    free(out);
}
END_TEST

/* Figures of a damaged profile that add up past 2^63 (two contexts of one program point):
 * the sum wraps, without undefined behaviour (the fuzzer's find), and a negative sum shows 0. */
START_TEST(huge_figures_wrap)
{
    struct hpf_live l1 = {.context_id = 1, .allocs = 2, .bytes = INT64_MAX, .live_count = INT64_MAX};
    struct hpf_live l2 = {.context_id = 2, .allocs = 3, .bytes = INT64_MAX, .live_count = INT64_MAX};
    char *out = two_on_one_stack(&l1, &l2);
    ck_assert_msg(strstr(out, "{\"tb\":0,\"tbk\":5,"), "%s", out);
    free(out);
}
END_TEST

/* Access data: reads and writes in bytes (8 per access), and per-byte counts from the
 * histogram, with the block at either offset of its first granule. */
START_TEST(access_bytes)
{
    struct ht_buf b = {0};
    struct hpf_process pr = {.pid = 7, .dump_ms = 5, .argc = 0};
    ht_file_header(&b);
    ht_process(&b, &pr, "glibc", "/bin/x", NULL);
    struct hpf_summary sum = {.total_allocs = 5};
    ht_record(&b, HPF_REC_SUMMARY, &sum, sizeof sum);
    struct hpf_access_module mod = {.addr = 0x1000, .mode = HPF_ACCESS_GCC};
    ht_access(&b, HPF_ACCESS_GCC, 64, 16, &mod, 1);
    uint64_t pc1[] = {0x1000}, pc2[] = {0x2000}, pc3[] = {0x3000}, pc4[] = {0x4000};
    ht_stack(&b, 1, pc1, 1);
    ht_stack(&b, 2, pc2, 1);
    ht_stack(&b, 3, pc3, 1);
    ht_stack(&b, 4, pc4, 1);
    /* 1: 4 blocks of 256 bytes, written at 32-byte offsets (5 bins): 40 per byte everywhere */
    struct hpf_hib h1 = {.context_id = 1, .alloc_count = 4, .total_size = 1024, .min_size = 256,
                         .max_size = 256, .total_access_count = 1280, .total_write_count = 1280};
    uint64_t bins1[] = {160, 320, 320, 320, 160};
    /* 2: 4 blocks of 512 bytes at granule starts, first half read 8 times per word */
    struct hpf_hib h2 = {.context_id = 2, .alloc_count = 4, .total_size = 2048, .min_size = 512,
                         .max_size = 512, .total_access_count = 128};
    uint64_t bins2[] = {32, 32, 32, 32};
    /* 3: blocks of two sizes: no per-byte counts */
    struct hpf_hib h3 = {.context_id = 3, .alloc_count = 2, .total_size = 96, .min_size = 32,
                         .max_size = 64, .total_access_count = 4};
    uint64_t bins3[] = {4};
    /* 4: 20-byte blocks, a count too large for DHAT's 16 bits */
    struct hpf_hib h4 = {.context_id = 4, .alloc_count = 1, .total_size = 20, .min_size = 20,
                         .max_size = 20, .total_access_count = 1000000};
    uint64_t bins4[] = {1000000};
    ht_record(&b, HPF_REC_HIB, &h1, sizeof h1);
    ht_record(&b, HPF_REC_HIB, &h2, sizeof h2);
    ht_record(&b, HPF_REC_HIB, &h3, sizeof h3);
    ht_record(&b, HPF_REC_HIB, &h4, sizeof h4);
    ht_access_hist(&b, 1, HPF_HIST_GRANULE, bins1, 5);
    ht_access_hist(&b, 2, HPF_HIST_GRANULE, bins2, 4);
    ht_access_hist(&b, 3, HPF_HIST_GRANULE, bins3, 1);
    ht_access_hist(&b, 4, HPF_HIST_GRANULE, bins4, 1);
    ht_end(&b);
    char *out = to_dhat(&b);
    ck_assert(strstr(out, "\"bkacc\":true,\n"));
    ck_assert_msg(strstr(out, "\"rb\":0,\"wb\":10240,\"acc\":[-256,40],\"fs\":[1]}"), "%s", out);
    ck_assert(strstr(out, "\"rb\":1024,\"wb\":0,\"acc\":[-256,4,-256,0],\"fs\":[2]}"));
    ck_assert(strstr(out, "\"rb\":32,\"wb\":0,\"fs\":[3]}"));
    ck_assert(strstr(out, "\"acc\":[-20,65535],\"fs\":[4]}"));
    free(out);
    free(b.data);
}
END_TEST

/* A diff: DHAT has no negative figures, so every figure that grew goes to a program point under
 * the frame "[grew: ...]" (ftbl[1]) and every one that shrank, as a positive amount, to one
 * under "[shrank: ...]" (ftbl[2]); unchanged figures are in neither. */
START_TEST(diff_two_sides)
{
    struct ht_buf b = {0};
    ht_sample(&b);
    struct hr_profile *base = parse_buf(&b), *p = parse_buf(&b);
    struct hr_context *c1 = hr_context_find(base, 1);
    c1->live.bytes += 500;    /* the new profile allocated 500 bytes less here */
    c1->live.live_size -= 100; /* and leaked 100 bytes more */
    p->diff_base = base;
    for (size_t i = 0; i < p->ncontexts; i++)
        p->contexts[i].base = hr_context_find(base, p->contexts[i].context_id);
    FILE *f = tmpfile();
    struct hr_output_opts opts = {.sort = HR_SORT_TOTAL_SIZE};
    ck_assert_int_eq(hr_write_dhat(f, p, &opts), 0);
    char *out = ht_slurp(f);
    fclose(f);
    ck_assert_msg(ht_json_valid(out), "invalid JSON:\n%s", out);
    ck_assert(strstr(out, "\"ftbl\":[\n\"[root]\",\n\"[grew: new profile minus base]\",\n"
                          "\"[shrank: base profile minus new]\""));
    ck_assert_int_eq(count(out, "\"tb\":"), 2);
    ck_assert_msg(strstr(out, "{\"tb\":0,\"tbk\":0,\"tl\":0,\"mb\":0,\"mbk\":0,\"gb\":0,"
                              "\"gbk\":0,\"eb\":100,\"ebk\":0,\"fs\":[3,4,1]}"), "%s", out);
    ck_assert_msg(strstr(out, "{\"tb\":500,\"tbk\":0,\"tl\":0,\"mb\":0,\"mbk\":0,\"gb\":0,"
                              "\"gbk\":0,\"eb\":0,\"ebk\":0,\"fs\":[3,4,2]}"), "%s", out);
    free(out);
    hr_profile_free(p);
    free(p);
    hr_profile_free(base);
    free(base);
    free(b.data);
}
END_TEST

START_TEST(cli_several_merged)
{
    char *path = ht_sample_file();
    /* several profiles are merged into one */
    char *merged;
    char *argv[] = {"heapprof-report", "-f", "dhat", path, path, NULL};
    ck_assert_int_eq(ht_cli(5, argv, &merged, NULL), HR_EXIT_OK);
    ck_assert(ht_json_valid(merged));
    free(merged);
    char *out;
    char *argv1[] = {"heapprof-report", "-f", "dhat", path, NULL};
    ck_assert_int_eq(ht_cli(4, argv1, &out, NULL), HR_EXIT_OK);
    ck_assert(ht_json_valid(out));
    ck_assert(strstr(out, "\"dhatFileVersion\":2"));
    free(out);
    unlink(path);
    free(path);
}
END_TEST

int main(void)
{
    TCase *tc = ht_tcase("report_dhat", "dhat", 60);
    tcase_add_test(tc, fields_and_figures);
    tcase_add_test(tc, same_stack_merged);
    tcase_add_test(tc, huge_figures_wrap);
    tcase_add_test(tc, access_bytes);
    tcase_add_test(tc, diff_two_sides);
    tcase_add_test(tc, cli_several_merged);
    return ht_run();
}
