/* Robustness tests of the reader (run under ASan/UBSan): every prefix of a valid profile,
 * every single-byte flip, large values in every 64-bit field and random damage must give
 * either a clean one-line error or a profile the writers can print, never a bad access. */
#include <check.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "hpf_writer.h"
#include "hr_output.h"
#include "hr_profile.h"

static struct ht_buf good;
static FILE *devnull;

/* The sample plus what it lacks: modules (a real ELF file, a pseudo one), an extra HIB for a
 * context, an unknown record, and version 2's frame tree and PACKED records for more contexts. */
static void build_good(void)
{
    struct ht_buf b = {0};
    ht_sample(&b);
    b.len -= 24; /* drop END, add more, then END again */
    b.records--;
    char self[4096];
    ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
    if (n <= 0)
        abort(); /* runs before any test, where ck_assert cannot report */
    self[n] = 0;
    struct hpf_segment seg = {.start = 0x401000 - 0x1000, .end = 0x403000, .prot = 5};
    uint8_t id[20] = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20};
    ht_module(&b, 0x400000, &seg, 1, id, sizeof id, self);
    struct hpf_segment vdso = {.start = 0x7fff0000, .end = 0x7fff2000, .prot = 5};
    ht_module(&b, 0x7fff0000, &vdso, 1, NULL, 0, "[vdso]");
    struct hpf_hib h = {.context_id = 1, .alloc_count = 2, .total_size = 24, .min_size = 12,
                        .max_size = 12, .dealloc_timestamp_ms = 9};
    ht_record(&b, HPF_REC_HIB, &h, sizeof h);
    uint8_t future[5] = {9, 9, 9, 9, 9};
    ht_record(&b, 77, future, sizeof future);
    static const struct hpf_stack_ref refs[] = {{3, 3}, {4, 2}, {5, 0}};
    ht_stack_refs(&b, refs, 3);
    static const uint32_t par[] = {0, 1, 2};
    static const uint64_t pcs[] = {0x402000, 0x401800, 0x7fff0100};
    ht_frames(&b, 1, 3, par, pcs);
    struct hpf_hib hibs[2] = {{.context_id = 3, .alloc_count = 1, .total_size = 300,
                               .min_size = 300, .max_size = 300, .alloc_cpu_id = 1},
                              {.context_id = 4, .alloc_count = 70000, .total_size = 1ull << 33,
                               .min_size = 1, .max_size = 1ull << 32}};
    ht_packed(&b, HPF_REC_HIB, hibs, 2, HPF_HIB_NFIELDS);
    struct hpf_live lives[3] = {{.context_id = 3, .allocs = 1, .bytes = 300},
                                {.context_id = 4, .allocs = 70000, .bytes = 1ull << 33},
                                {.context_id = 5, .allocs = 2, .bytes = 2, .live_count = 2}};
    ht_packed(&b, HPF_REC_LIVE, lives, 3, HPF_LIVE_NFIELDS);
    ht_end(&b);
    good = b;
}

/* Parses data (consumed); on success prints both formats. Returns the parse status. */
static int try_parse(uint8_t *data, size_t size, char *err)
{
    struct hr_profile p;
    err[0] = 0;
    int r = hr_profile_parse(&p, "fuzz.hpf", data, size, err);
    if (r == 0) {
        struct hr_profile *v = &p;
        struct hr_output_opts opts = {.sort = HR_SORT_LIVE_SIZE, .top = 0};
        ck_assert_int_eq(hr_write_json(devnull, &v, 1, &opts), 0);
        ck_assert_int_eq(hr_write_text(devnull, &v, 1, &opts), 0);
    } else {
        ck_assert_msg(err[0] != 0, "error without a message");
        ck_assert_msg(strchr(err, '\n') == NULL, "multi-line error: %s", err);
    }
    hr_profile_free(&p);
    return r;
}

START_TEST(good_profile_parses)
{
    char err[HR_ERR_MAX];
    ck_assert_msg(try_parse(ht_copy(good.data, good.len), good.len, err) == 0, "%s", err);
}
END_TEST

START_TEST(every_prefix_fails)
{
    char err[HR_ERR_MAX];
    for (size_t n = 0; n < good.len; n++) {
        /* An exact-size allocation, so ASan catches a read one byte past the prefix. */
        ck_assert_msg(try_parse(ht_copy(good.data, n), n, err) == -1, "prefix %zu accepted", n);
    }
}
END_TEST

/* The first bytes say what is wrong: nothing at all, not a profile, a header cut short. */
START_TEST(short_files_say_why)
{
    char err[HR_ERR_MAX];
    ck_assert_int_eq(try_parse(ht_copy(good.data, 0), 0, err), -1);
    ck_assert_msg(strstr(err, "empty file") != NULL, "%s", err);
    ck_assert_int_eq(try_parse(ht_copy("HEAPPRIF", 8), 8, err), -1);
    ck_assert_msg(strstr(err, "not a heapprof profile") != NULL, "%s", err);
    ck_assert_int_eq(try_parse(ht_copy(good.data, 12), 12, err), -1);
    ck_assert_msg(strstr(err, "truncated file header") != NULL, "%s", err);
}
END_TEST

START_TEST(every_byte_flip)
{
    char err[HR_ERR_MAX];
    static const uint8_t masks[] = {0xff, 0x01, 0x80, 0x10};
    for (size_t m = 0; m < sizeof masks; m++) {
        for (size_t i = 0; i < good.len; i++) {
            uint8_t *d = ht_copy(good.data, good.len);
            d[i] ^= masks[m];
            try_parse(d, good.len, err);
        }
    }
}
END_TEST

START_TEST(large_values_everywhere)
{
    char err[HR_ERR_MAX];
    static const uint64_t values[] = {UINT64_MAX, 0x7fffffffffffffffull, 0xffffffffull,
                                      0x80000000ull, 0x100000000ull, 0};
    for (size_t v = 0; v < sizeof values / sizeof values[0]; v++) {
        for (size_t i = 0; i + 8 <= good.len; i += 4) {
            uint8_t *d = ht_copy(good.data, good.len);
            memcpy(d + i, &values[v], 8);
            try_parse(d, good.len, err);
        }
    }
}
END_TEST

START_TEST(random_damage)
{
    char err[HR_ERR_MAX];
    unsigned seed = 12345;
    for (int iter = 0; iter < 3000; iter++) {
        size_t len = good.len;
        if (rand_r(&seed) % 4 == 0)
            len = (size_t)rand_r(&seed) % (good.len + 1);
        uint8_t *d = ht_copy(good.data, len);
        int hits = 1 + rand_r(&seed) % 8;
        for (int k = 0; k < hits && len > 32; k++)
            d[32 + (size_t)rand_r(&seed) % (len - 32)] = (uint8_t)rand_r(&seed);
        try_parse(d, len, err);
    }
}
END_TEST

int main(void)
{
    devnull = fopen("/dev/null", "w");
    build_good();
    Suite *s = suite_create("report_corrupt");
    TCase *tc = tcase_create("corrupt");
    tcase_set_timeout(tc, 300);
    tcase_add_test(tc, good_profile_parses);
    tcase_add_test(tc, every_prefix_fails);
    tcase_add_test(tc, short_files_say_why);
    tcase_add_test(tc, every_byte_flip);
    tcase_add_test(tc, large_values_everywhere);
    tcase_add_test(tc, random_damage);
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    free(good.data);
    fclose(devnull);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
