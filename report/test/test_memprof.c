/* Unit tests of --format memprof: the bytes of the LLVM MemProf raw profile (version 2) written
 * for an in-memory profile (header, segments, MIBs, stacks, padding), the HIB to MIB mapping,
 * and the profiles it refuses (PIE executable, diff, nothing to export). */
#include <check.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"
#include "hpf_writer.h"
#include "hr_cli.h"
#include "hr_output.h"
#include "hr_profile.h"
#include "memprof_internal.h"

static const uint8_t build_id[20] = {0xe7, 0x8a, 0x46, 0xfe, 1, 2, 3, 4, 5, 6,
                                     7, 8, 9, 10, 11, 12, 13, 14, 15, 0x9c};

/* A profile of /usr/bin/prog loaded at bias (0: non-PIE) with an executable and a data
 * segment, libc with one executable segment, and three contexts: 1 and 2 with HIBs, 3 with a
 * LIVE record only (nothing to export). */
static void sample(struct ht_buf *b, uint64_t bias)
{
    static const char *const argv[] = {"prog"};
    struct hpf_process pr = {.pid = 7, .dump_reason = HPF_DUMP_EXIT, .stack_depth = 64,
                             .argc = 1};
    ht_file_header(b);
    ht_process(b, &pr, "next", "/usr/bin/prog", argv);
    struct hpf_summary sum = {.total_allocs = 12, .contexts = 3};
    ht_record(b, HPF_REC_SUMMARY, &sum, sizeof sum);
    struct hpf_segment exe[] = {{bias + 0x401000, bias + 0x402000, 0x1000, 5, 0},
                                {bias + 0x403000, bias + 0x404000, 0x3000, 3, 0}};
    ht_module(b, bias, exe, 2, build_id, sizeof build_id, "/usr/bin/prog");
    struct hpf_segment libc[] = {{0x7f0000026000, 0x7f000017c000, 0x26000, 5, 0}};
    ht_module(b, 0x7f0000000000, libc, 1, NULL, 0, "/lib/x86_64-linux-gnu/libc.so.6");
    uint64_t pcs1[] = {bias + 0x401010, bias + 0x401200, 0x7f000002724a};
    uint64_t pcs2[] = {bias + 0x401300};
    uint64_t pcs3[] = {bias + 0x401400};
    ht_stack(b, 1, pcs1, 3);
    ht_stack(b, 2, pcs2, 1);
    ht_stack(b, 3, pcs3, 1);
    struct hpf_hib h1 = {.context_id = 1, .alloc_count = 10, .total_size = 1000,
                         .min_size = 100, .max_size = 100, .total_lifetime_ms = 50,
                         .min_lifetime_ms = 1, .max_lifetime_ms = 20,
                         .total_access_count = 130, .min_access_count = 13,
                         .max_access_count = 13, .alloc_timestamp_ms = 300,
                         .dealloc_timestamp_ms = 320, .alloc_cpu_id = 3, .dealloc_cpu_id = 1,
                         .num_migrated_cpu = 2, .num_lifetime_overlaps = 4,
                         .num_same_alloc_cpu = 5, .num_same_dealloc_cpu = 6};
    /* A block of 5 GiB: its size saturates in LLVM's 32-bit MinSize/MaxSize. */
    struct hpf_hib h2 = {.context_id = 2, .alloc_count = 1, .total_size = 5ull << 30,
                         .min_size = 5ull << 30, .max_size = 5ull << 30};
    ht_record(b, HPF_REC_HIB, &h1, sizeof h1);
    ht_record(b, HPF_REC_HIB, &h2, sizeof h2);
    struct hpf_live l3 = {.context_id = 3, .allocs = 1, .bytes = 8};
    ht_record(b, HPF_REC_LIVE, &l3, sizeof l3);
    ht_end(b);
}

static struct hr_profile *load(uint64_t bias)
{
    struct ht_buf b = {0};
    sample(&b, bias);
    struct hr_profile *p = calloc(1, sizeof *p);
    char err[HR_ERR_MAX];
    ck_assert_msg(hr_profile_parse(p, "t.hpf", ht_copy(b.data, b.len), b.len, err) == 0, "%s",
                  err);
    free(b.data);
    return p;
}

static void unload(struct hr_profile *p)
{
    hr_profile_free(p);
    free(p);
}

static uint64_t get64(const uint8_t *p)
{
    uint64_t v = 0;
    for (int i = 7; i >= 0; i--)
        v = v << 8 | p[i];
    return v;
}

static uint32_t get32(const uint8_t *p) { return (uint32_t)p[0] | (uint32_t)p[1] << 8 |
                                                 (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24; }

/* The raw profile of p; *n its size. */
static uint8_t *export(const struct hr_profile *p, size_t *n)
{
    FILE *f = tmpfile();
    struct hr_output_opts opts = {.sort = HR_SORT_TOTAL_SIZE};
    ck_assert_int_eq(hr_write_memprof(f, p, &opts), 0);
    fflush(f);
    long len = ftell(f);
    rewind(f);
    uint8_t *buf = malloc((size_t)len + 1);
    ck_assert_uint_eq(fread(buf, 1, (size_t)len, f), (size_t)len);
    fclose(f);
    *n = (size_t)len;
    return buf;
}

START_TEST(header_and_segments)
{
    struct hr_profile *p = load(0);
    size_t n;
    uint8_t *r = export(p, &n);
    /* The magic as LLVM reads it, and its bytes: 0x81 "rforpm" 0xff. */
    ck_assert_uint_eq(get64(r), HR_MEMPROF_MAGIC);
    ck_assert(memcmp(r, "\x81rforpm\xff", 8) == 0);
    ck_assert_uint_eq(get64(r + 8), 2);
    ck_assert_uint_eq(get64(r + 16), n); /* total size: the whole file */
    ck_assert_uint_eq(n % 8, 0);
    uint64_t seg = get64(r + 24), mib = get64(r + 32), stk = get64(r + 40);
    ck_assert_uint_eq(seg, 48);
    /* Two executable segments (the exe's data segment is not one), 56 bytes each. */
    ck_assert_uint_eq(get64(r + seg), 2);
    ck_assert_uint_eq(mib, seg + 8 + 2 * 56);
    const uint8_t *s = r + seg + 8;
    ck_assert_uint_eq(get64(s), 0x401000);
    ck_assert_uint_eq(get64(s + 8), 0x402000);
    ck_assert_uint_eq(get64(s + 16), 0x1000);
    ck_assert(memcmp(s + 24, build_id, 20) == 0);
    for (int i = 20; i < 32; i++)
        ck_assert_uint_eq(s[24 + i], 0);
    s += 56;
    ck_assert_uint_eq(get64(s), 0x7f0000026000);
    ck_assert_uint_eq(get64(s + 16), 0x26000);
    for (int i = 0; i < 32; i++)
        ck_assert_uint_eq(s[24 + i], 0);
    /* Two MIBs (context 3 has none): 8 + 2 * (8 + 132) = 288, already a multiple of 8. */
    ck_assert_uint_eq(stk, mib + 288);
    free(r);
    unload(p);
}
END_TEST

/* The MIB of context 1 at m, field by field at the offsets of LLVM's packed struct. */
static void check_mib1(const uint8_t *m)
{
    ck_assert_uint_eq(get32(m + 0), 10);    /* AllocCount */
    ck_assert_uint_eq(get64(m + 4), 130);   /* TotalAccessCount */
    ck_assert_uint_eq(get64(m + 12), 13);   /* MinAccessCount */
    ck_assert_uint_eq(get64(m + 20), 13);   /* MaxAccessCount */
    ck_assert_uint_eq(get64(m + 28), 1000); /* TotalSize */
    ck_assert_uint_eq(get32(m + 36), 100);  /* MinSize */
    ck_assert_uint_eq(get32(m + 40), 100);  /* MaxSize */
    ck_assert_uint_eq(get32(m + 44), 300);  /* AllocTimestamp */
    ck_assert_uint_eq(get32(m + 48), 320);  /* DeallocTimestamp */
    ck_assert_uint_eq(get64(m + 52), 50);   /* TotalLifetime */
    ck_assert_uint_eq(get32(m + 60), 1);    /* MinLifetime */
    ck_assert_uint_eq(get32(m + 64), 20);   /* MaxLifetime */
    ck_assert_uint_eq(get32(m + 68), 3);    /* AllocCpuId */
    ck_assert_uint_eq(get32(m + 72), 1);    /* DeallocCpuId */
    ck_assert_uint_eq(get32(m + 76), 2);    /* NumMigratedCpu */
    ck_assert_uint_eq(get32(m + 80), 4);    /* NumLifetimeOverlaps */
    ck_assert_uint_eq(get32(m + 84), 5);    /* NumSameAllocCpu */
    ck_assert_uint_eq(get32(m + 88), 6);    /* NumSameDeallocCpu */
    ck_assert_uint_eq(get64(m + 92), 0);    /* DataTypeId */
    /* Densities as LLVM's runtime computes them per block (13 * 100 / 100 = 13 each), summed
     * over 10 blocks; lifetime densities over the average lifetime (5 ms) for the sum, the
     * longest (20) for the minimum, the shortest (1) for the maximum. */
    ck_assert_uint_eq(get64(m + 100), 130);   /* TotalAccessDensity */
    ck_assert_uint_eq(get32(m + 108), 13);    /* MinAccessDensity */
    ck_assert_uint_eq(get32(m + 112), 13);    /* MaxAccessDensity */
    ck_assert_uint_eq(get64(m + 116), 26000); /* TotalLifetimeAccessDensity */
    ck_assert_uint_eq(get32(m + 124), 650);   /* MinLifetimeAccessDensity */
    ck_assert_uint_eq(get32(m + 128), 13000); /* MaxLifetimeAccessDensity */
}

START_TEST(mibs)
{
    struct hr_profile *p = load(0);
    size_t n;
    uint8_t *r = export(p, &n);
    const uint8_t *m = r + get64(r + 32);
    ck_assert_uint_eq(get64(m), 2);
    m += 8;
    /* Entries in the profile's context order, each its stack id (the context id) first. */
    ck_assert_uint_eq(get64(m), 1);
    check_mib1(m + 8);
    m += 8 + HR_MEMPROF_MIB_SIZE;
    ck_assert_uint_eq(get64(m), 2);
    ck_assert_uint_eq(get32(m + 8), 1);
    ck_assert_uint_eq(get64(m + 8 + 28), 5ull << 30); /* TotalSize stays exact */
    ck_assert_uint_eq(get32(m + 8 + 36), UINT32_MAX); /* MinSize saturates */
    ck_assert_uint_eq(get32(m + 8 + 40), UINT32_MAX);
    free(r);
    unload(p);
}
END_TEST

START_TEST(stacks)
{
    struct hr_profile *p = load(0);
    size_t n;
    uint8_t *r = export(p, &n);
    const uint8_t *s = r + get64(r + 40);
    ck_assert_uint_eq(get64(s), 2);
    /* Context 1: id, depth, then the call addresses (return address - 1), innermost first;
     * the libc frame is kept, llvm-profdata drops what it cannot symbolise. */
    ck_assert_uint_eq(get64(s + 8), 1);
    ck_assert_uint_eq(get64(s + 16), 3);
    ck_assert_uint_eq(get64(s + 24), 0x40100f);
    ck_assert_uint_eq(get64(s + 32), 0x4011ff);
    ck_assert_uint_eq(get64(s + 40), 0x7f0000027249);
    ck_assert_uint_eq(get64(s + 48), 2);
    ck_assert_uint_eq(get64(s + 56), 1);
    ck_assert_uint_eq(get64(s + 64), 0x4012ff);
    ck_assert_uint_eq((size_t)(s + 72 - r), n); /* the stacks end the file */
    free(r);
    unload(p);
}
END_TEST

START_TEST(odd_mib_count_is_padded)
{
    /* One MIB: 8 + 140 = 148 bytes, padded to 152 so the stack section stays aligned. */
    struct hr_profile *p = load(0);
    p->contexts[1].has_hib = 0; /* context 2 */
    size_t n;
    uint8_t *r = export(p, &n);
    ck_assert_uint_eq(get64(r + 40) - get64(r + 32), 152);
    ck_assert_uint_eq(get64(r + get64(r + 32)), 1);
    for (int i = 148; i < 152; i++)
        ck_assert_uint_eq(r[get64(r + 32) + i], 0);
    free(r);
    unload(p);
}
END_TEST

START_TEST(mib_densities)
{
    /* Blocks of unlike sizes and lifetimes: bounds from the extremes; no byte, no density. */
    struct hpf_hib h = {.alloc_count = 4, .total_size = 400, .min_size = 50, .max_size = 200,
                        .total_access_count = 200, .min_access_count = 10,
                        .max_access_count = 100, .total_lifetime_ms = 0,
                        .max_lifetime_ms = 0};
    struct hr_mib m;
    hr_memprof_mib(&h, &m);
    ck_assert_uint_eq(m.total_access_density, 200); /* 4 blocks of 50 per 100 bytes */
    ck_assert_uint_eq(m.min_access_density, 5);     /* 10 * 100 / 200 */
    ck_assert_uint_eq(m.max_access_density, 200);   /* 100 * 100 / 50 */
    ck_assert_uint_eq(m.total_lifetime_access_density, 200000); /* lifetimes of 0 count as 1 */
    ck_assert_uint_eq(m.max_lifetime_access_density, 200000);
    h = (struct hpf_hib){.alloc_count = 2, .total_access_count = 8};
    hr_memprof_mib(&h, &m);
    ck_assert_uint_eq(m.total_access_density, 0);
    ck_assert_uint_eq(m.max_access_density, 0);
    h = (struct hpf_hib){.alloc_count = 5ull << 32, .min_lifetime_ms = 7};
    hr_memprof_mib(&h, &m);
    ck_assert_uint_eq(m.alloc_count, UINT32_MAX);
    ck_assert_uint_eq(m.min_lifetime, 7);
}
END_TEST

START_TEST(refusals)
{
    char err[HR_ERR_MAX];
    struct hr_profile *p = load(0);
    ck_assert_int_eq(hr_memprof_check(p, err), 0);
    /* A diff: LLVM's counts cannot go negative. */
    struct hr_profile base = {0};
    p->diff_base = &base;
    ck_assert_int_eq(hr_memprof_check(p, err), -1);
    ck_assert_msg(strstr(err, "diff"), "%s", err);
    FILE *f = tmpfile();
    struct hr_output_opts opts = {.warn = f};
    FILE *out = tmpfile();
    ck_assert_int_eq(hr_write_memprof(out, p, &opts), HR_WRITE_REFUSED);
    ck_assert_int_eq(ftell(out), 0);
    char *msg = ht_slurp(f);
    ck_assert_msg(strncmp(msg, "heapprof-report: ", 17) == 0 && strchr(msg, '\n') ==
                  msg + strlen(msg) - 1, "%s", msg);
    free(msg);
    fclose(f);
    fclose(out);
    p->diff_base = NULL;
    /* Nothing with blocks and a stack. */
    for (size_t i = 0; i < p->ncontexts; i++)
        p->contexts[i].has_hib = 0;
    ck_assert_int_eq(hr_memprof_check(p, err), -1);
    ck_assert_msg(strstr(err, "no allocation"), "%s", err);
    /* No module at the executable's path. */
    p->executable.len = 3;
    ck_assert_int_eq(hr_memprof_check(p, err), -1);
    ck_assert_msg(strstr(err, "no module"), "%s", err);
    unload(p);
    /* A PIE executable: llvm-profdata 16 cannot symbolise it; the message says how to build. */
    p = load(0x555555554000);
    ck_assert_int_eq(hr_memprof_check(p, err), -1);
    ck_assert_msg(strstr(err, "position-independent") && strstr(err, "-no-pie -fno-pie"), "%s",
                  err);
    unload(p);
}
END_TEST

/* The command line: one profile only, never to a terminal, a refusal leaves -o alone. */
START_TEST(cli)
{
    struct ht_buf b = {0};
    sample(&b, 0x555555554000);
    char *pie = ht_tmpfile(b.data, b.len);
    free(b.data);
    char *outpath = ht_tmpfile("keep", 4);
    char *argv1[] = {"heapprof-report", "-f", "memprof", "-o", outpath, pie, NULL};
    ck_assert_int_eq(ht_cli(6, argv1, NULL, NULL), HR_EXIT_FAIL);
    FILE *o = fopen(outpath, "r");
    char got[8] = {0};
    ck_assert_uint_eq(fread(got, 1, sizeof got, o), 4);
    fclose(o);
    ck_assert_str_eq(got, "keep");
    /* several profiles are merged first; the merged one is refused for the same reason */
    char *argv2[] = {"heapprof-report", "-f", "memprof", "-o", outpath, pie, pie, NULL};
    char *msg;
    ck_assert_int_eq(ht_cli(7, argv2, NULL, &msg), HR_EXIT_FAIL);
    ck_assert_msg(strstr(msg, "position-independent") && !strstr(msg, "out of memory"), "%s", msg);
    free(msg);
    unlink(outpath);
    unlink(pie);
    free(outpath);
    free(pie);
}
END_TEST

int main(void)
{
    TCase *tc = ht_tcase("report_memprof", "memprof", 0);
    tcase_add_test(tc, header_and_segments);
    tcase_add_test(tc, mibs);
    tcase_add_test(tc, stacks);
    tcase_add_test(tc, odd_mib_count_is_padded);
    tcase_add_test(tc, mib_densities);
    tcase_add_test(tc, refusals);
    tcase_add_test(tc, cli);
    return ht_run();
}
