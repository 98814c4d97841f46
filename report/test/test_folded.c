/* Unit tests of the folded-stacks output: the exact lines for a profile whose stacks point into
 * this test's own functions (names, inlined frames, module+offset, bare addresses, empty
 * stacks, merging of stacks with the same names), each metric, escaping, the diff's two
 * columns and the command line's --format folded / --metric. */
#include <check.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"
#include "hpf_writer.h"
#include "hr_cli.h"
#include "hr_output.h"
#include "hr_profile.h"
#include "self_module.h"

/* Frames: noinline functions with different bodies (so no identical-code folding merges
 * them). A pc one past a function's entry symbolises to that function. */
volatile int ft_sink;
__attribute__((noinline)) void hr_ft_alpha(void) { ft_sink = 1; }
__attribute__((noinline)) void hr_ft_beta(void) { ft_sink = 2; ft_sink = 3; }
__attribute__((noinline)) void hr_ft_gamma(void) { ft_sink = 4; ft_sink = 5; ft_sink = 6; }
#define PC(f) ((uint64_t)(uintptr_t)&(f) + 1)

/* A return address inside two functions inlined into hr_ft_outer. */
static uint64_t ft_inl_ra;
__attribute__((noinline)) static void hr_ft_grab(void)
{
    ft_inl_ra = (uint64_t)(uintptr_t)__builtin_return_address(0);
    __asm__ volatile("" ::: "memory");
}
static inline __attribute__((always_inline)) void hr_ft_leaf(void)
{
    hr_ft_grab();
    __asm__ volatile("" ::: "memory");
}
static inline __attribute__((always_inline)) void hr_ft_mid(void)
{
    hr_ft_leaf();
    __asm__ volatile("" ::: "memory");
}
__attribute__((noinline)) void hr_ft_outer(void)
{
    hr_ft_mid();
    __asm__ volatile("" ::: "memory");
}

#define GONE 0x100000000000ull

static void ctx(struct ht_buf *b, uint32_t id, const uint64_t *pcs, uint32_t depth,
                uint64_t count, uint64_t bytes, uint64_t live_count, uint64_t live_size)
{
    if (pcs)
        ht_stack(b, id, pcs, depth);
    struct hpf_hib h = {.context_id = id, .alloc_count = count, .total_size = bytes,
                        .min_size = count ? bytes / count : 0, .max_size = count ? bytes / count : 0};
    ht_record(b, HPF_REC_HIB, &h, sizeof h);
    struct hpf_live l = {.context_id = id, .allocs = count, .bytes = bytes,
                         .live_count = live_count, .live_size = live_size};
    ht_record(b, HPF_REC_LIVE, &l, sizeof l);
}

/* The test profile; base: the smaller one a diff compares it with (context 1 only). */
static struct hr_profile *profile(int base)
{
    struct self_module m;
    self_module(&m);
    hr_ft_outer();
    struct ht_buf b = {0};
    ht_file_header(&b);
    static const char *const argv[] = {"./ft"};
    struct hpf_process pr = {.pid = 77, .argc = 1, .dump_reason = HPF_DUMP_EXIT};
    ht_process(&b, &pr, "glibc", m.path, argv);
    struct hpf_summary s = {.total_allocs = 21};
    ht_record(&b, HPF_REC_SUMMARY, &s, sizeof s);
    ht_module(&b, m.bias, m.segs, m.nsegs, m.build_id, m.build_id_len, m.path);
    struct hpf_segment gone = {.start = GONE, .end = GONE + 0x10000, .prot = 5};
    ht_module(&b, GONE, &gone, 1, NULL, 0, "/nonexistent/lib;x\ny.so");
    uint64_t s1[] = {PC(hr_ft_alpha), PC(hr_ft_beta), PC(hr_ft_gamma)};
    uint64_t s2[] = {PC(hr_ft_alpha) + 1, PC(hr_ft_beta), PC(hr_ft_gamma)};
    uint64_t s3[] = {GONE + 0x1235, PC(hr_ft_gamma)};
    uint64_t s4[] = {0x10};
    uint64_t s5[] = {PC(hr_ft_beta)};
    uint64_t s7[] = {ft_inl_ra, PC(hr_ft_gamma)};
    if (base) {
        ctx(&b, 1, s1, 3, 4, 400, 1, 100);
    } else {
        ctx(&b, 1, s1, 3, 10, 1000, 3, 300);
        ctx(&b, 2, s2, 3, 5, 500, 0, 0);
        ctx(&b, 3, s3, 2, 2, 4000, 2, 4000);
        ctx(&b, 4, s4, 1, 1, 7, 0, 0);
        ctx(&b, 5, s5, 1, 0, 0, 0, 0);
        ctx(&b, 6, NULL, 0, 3, 30, 0, 0);
        ctx(&b, 7, s7, 2, 1, 64, 0, 0);
    }
    ht_end(&b);
    struct hr_profile *p = malloc(sizeof *p);
    char err[HR_ERR_MAX];
    ck_assert_msg(hr_profile_parse(p, "ft.hpf", b.data, b.len, err) == 0, "%s", err);
    return p;
}

static char *folded(const struct hr_profile *p, enum hr_metric metric)
{
    FILE *f = tmpfile();
    struct hr_output_opts o = {.sort = HR_SORT_TOTAL_SIZE, .metric = metric};
    ck_assert_int_eq(hr_write_folded(f, p, &o), 0);
    char *out = ht_slurp(f);
    fclose(f);
    return out;
}

static void drop(struct hr_profile *p)
{
    hr_profile_free(p);
    free(p);
}

START_TEST(bytes_lines)
{
    struct hr_profile *p = profile(0);
    char *out = folded(p, HR_METRIC_ALLOC_BYTES);
    /* In --sort order; contexts 1 and 2 differ in pc only: one line; context 5 (no bytes) left
     * out; the inlined functions as frames of their own, outermost first. */
    ck_assert_str_eq(out, "hr_ft_gamma;lib:x?y.so+0x1235 4000\n"
                          "hr_ft_gamma;hr_ft_beta;hr_ft_alpha 1500\n"
                          "hr_ft_gamma;hr_ft_outer;hr_ft_mid;hr_ft_leaf 64\n"
                          "[no stack] 30\n"
                          "0x10 7\n");
    free(out);
    drop(p);
}
END_TEST

START_TEST(other_metrics)
{
    struct hr_profile *p = profile(0);
    char *out = folded(p, HR_METRIC_ALLOC_COUNT);
    ck_assert_str_eq(out, "hr_ft_gamma;lib:x?y.so+0x1235 2\n"
                          "hr_ft_gamma;hr_ft_beta;hr_ft_alpha 15\n"
                          "hr_ft_gamma;hr_ft_outer;hr_ft_mid;hr_ft_leaf 1\n"
                          "[no stack] 3\n"
                          "0x10 1\n");
    free(out);
    out = folded(p, HR_METRIC_INUSE_BYTES);
    ck_assert_str_eq(out, "hr_ft_gamma;lib:x?y.so+0x1235 4000\n"
                          "hr_ft_gamma;hr_ft_beta;hr_ft_alpha 300\n");
    free(out);
    out = folded(p, HR_METRIC_ACCESSES); /* no access data: nothing to draw */
    ck_assert_str_eq(out, "");
    free(out);
    drop(p);
}
END_TEST

START_TEST(diff_two_columns)
{
    struct hr_profile *base = profile(1), *p = profile(0);
    p->diff_base = base;
    for (size_t i = 0; i < p->ncontexts; i++)
        p->contexts[i].base = hr_context_find(base, p->contexts[i].context_id);
    char *out = folded(p, HR_METRIC_ALLOC_BYTES);
    /* base then new, as flamegraph.pl's differential input */
    ck_assert_str_eq(out, "hr_ft_gamma;lib:x?y.so+0x1235 0 4000\n"
                          "hr_ft_gamma;hr_ft_beta;hr_ft_alpha 400 1500\n"
                          "hr_ft_gamma;hr_ft_outer;hr_ft_mid;hr_ft_leaf 0 64\n"
                          "[no stack] 0 30\n"
                          "0x10 0 7\n");
    free(out);
    out = folded(p, HR_METRIC_INUSE_BYTES);
    ck_assert_str_eq(out, "hr_ft_gamma;lib:x?y.so+0x1235 0 4000\n"
                          "hr_ft_gamma;hr_ft_beta;hr_ft_alpha 100 300\n");
    free(out);
    drop(p);
    drop(base);
}
END_TEST

/* Runs the tool; returns its status, stdout and stderr in *out and *err. */
static int cli(const char **args, int n, char **out, char **err)
{
    char *argv[16];
    argv[0] = "heapprof-report";
    for (int i = 0; i < n; i++)
        argv[i + 1] = (char *)args[i];
    return ht_cli(n + 1, argv, out, err);
}

START_TEST(command_line)
{
    char *path = ht_sample_file();
    char *out, *err;
    const char *a1[] = {"--format", "folded", "--metric", "count", path};
    ck_assert_int_eq(cli(a1, 5, &out, &err), HR_EXIT_OK);
    ck_assert_str_eq(out, "0x402000 20\n0x401100;0x401000 10\n");
    free(out);
    free(err);
    const char *a2[] = {"-f", "folded", "-M", "leaked", path};
    ck_assert_int_eq(cli(a2, 5, &out, &err), HR_EXIT_OK);
    ck_assert_str_eq(out, "0x401100;0x401000 500\n");
    free(out);
    free(err);
    const char *a3[] = {"-f", "folded", "--metric", "nope", path};
    ck_assert_int_eq(cli(a3, 5, &out, &err), HR_EXIT_USAGE);
    ck_assert_str_eq(err, "heapprof-report: unknown metric 'nope' (try --help)\n");
    free(out);
    free(err);
    /* two copies of one process's dump merge into one: the same lines */
    const char *a4[] = {"-f", "folded", path, path};
    ck_assert_int_eq(cli(a4, 4, &out, &err), HR_EXIT_OK);
    ck_assert_str_eq(err, "");
    ck_assert_ptr_nonnull(strchr(out, '\n'));
    free(out);
    free(err);
    unlink(path);
    free(path);
}
END_TEST

int main(void)
{
    TCase *tc = ht_tcase("report_folded", "folded", 0);
    tcase_add_test(tc, bytes_lines);
    tcase_add_test(tc, other_metrics);
    tcase_add_test(tc, diff_two_columns);
    tcase_add_test(tc, command_line);
    return ht_run();
}
