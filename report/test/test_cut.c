/* Profiles cut short (run under ASan/UBSan): real profiles (report/fuzz/corpus) cut at every
 * byte are read up to the cut or refused with one line, never misread: what is kept grows with
 * the cut, equals the whole file's at the end, and every context kept has exactly the figures
 * it has in the whole file. Every writer, merges and diffs take the cut profiles. */
#include <check.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"
#include "hpf_writer.h"
#include "hr_merge.h"
#include "hr_output.h"
#include "hr_profile.h"

/* Real profiles written by the shim (exit dumps of ls, sh, test programs; access profiles). */
static const char *const corpus[] = {
    "report/fuzz/corpus/t_threads.hpf", "report/fuzz/corpus/t_new_delete.hpf",
    "report/fuzz/corpus/ls.hpf",        "report/fuzz/corpus/sh.hpf",
    "report/fuzz/corpus/access.hpf",    "report/fuzz/corpus/access-dump1.hpf",
};
#define NCORPUS (sizeof corpus / sizeof corpus[0])

static FILE *devnull;

static uint8_t *read_all(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    ck_assert_msg(f != NULL, "cannot open %s (the tests run from the repository's top)", path);
    static uint8_t buf[1 << 20];
    *len = fread(buf, 1, sizeof buf, f);
    fclose(f);
    ck_assert(*len > 32 && *len < sizeof buf);
    return ht_copy(buf, *len);
}

static uint64_t sum_allocs(const struct hr_profile *p)
{
    uint64_t n = 0;
    for (size_t i = 0; i < p->ncontexts; i++)
        n += p->contexts[i].live.allocs;
    return n;
}

/* The kept context c has exactly the figures of the same context of the whole profile. */
static void same_context(const struct hr_profile *whole, const struct hr_context *c, size_t cut)
{
    const struct hr_context *w = hr_context_find(whole, c->context_id);
    ck_assert_msg(w != NULL, "cut %zu: context %u is not in the whole profile", cut,
                  c->context_id);
    ck_assert_msg(memcmp(&w->live, &c->live, sizeof w->live) == 0 &&
                      memcmp(&w->hib, &c->hib, sizeof w->hib) == 0,
                  "cut %zu: context %u differs from the whole profile's", cut, c->context_id);
    ck_assert_msg(w->depth == c->depth &&
                      (!w->depth || memcmp(w->pcs, c->pcs, w->depth * 8) == 0),
                  "cut %zu: context %u's stack differs", cut, c->context_id);
}

/* Every writer takes p; text and JSON say it was cut. */
static void write_all(struct hr_profile *p)
{
    struct hr_profile *v = p;
    struct hr_output_opts o = {.sort = HR_SORT_TOTAL_SIZE, .top = 0};
    ck_assert_int_eq(hr_write_text(devnull, &v, 1, &o), 0);
    ck_assert_int_eq(hr_write_json(devnull, &v, 1, &o), 0);
    ck_assert_int_eq(hr_write_pprof(devnull, p, &o), 0);
    ck_assert_int_eq(hr_write_dhat(devnull, p, &o), 0);
    ck_assert_int_eq(hr_write_folded(devnull, p, &o), 0);
    ck_assert_int_eq(hr_write_html(devnull, p, &o), 0);
    char why[HR_ERR_MAX];
    if (hr_memprof_check(p, why) == 0)
        ck_assert_int_eq(hr_write_memprof(devnull, p, &o), 0);
}

/* Cuts the profile at every byte (the file's own length included). A cut is refused only
 * inside the file header or before the PROCESS record; otherwise the profile is marked cut,
 * and its contexts and allocations never shrink as the cut moves on. Every writer runs on a
 * cut every `every` bytes. */
static void cut_everywhere(const char *path, const uint8_t *data, size_t len, size_t every)
{
    struct hr_profile whole;
    char err[HR_ERR_MAX];
    ck_assert_msg(hr_profile_parse(&whole, path, ht_copy(data, len), len, err) == 0, "%s", err);
    ck_assert_int_eq(whole.cut.cut, 0);
    /* Where the PROCESS record's payload ends: from there on every cut is read. */
    size_t process_end = 0;
    for (size_t off = 32; off + 16 <= len && !process_end;) {
        struct hpf_record_header rh;
        memcpy(&rh, data + off, sizeof rh);
        if (rh.type == HPF_REC_PROCESS)
            process_end = off + 16 + rh.size;
        off += 16 + ((rh.size + 7) & ~(uint64_t)7);
    }
    ck_assert(process_end > 0);
    size_t last_ctx = 0, ok = 0;
    uint64_t last_allocs = 0;
    for (size_t n = 0; n < len; n++) {
        struct hr_profile p;
        err[0] = 0;
        /* An exact-size copy: ASan catches a read one byte past the cut. */
        int r = hr_profile_parse(&p, path, ht_copy(data, n), n, err);
        if (n < process_end) {
            ck_assert_msg(r == -1, "%s cut at %zu: read without its PROCESS record", path, n);
            ck_assert_msg(err[0] && !strchr(err, '\n'), "%s cut at %zu: bad error '%s'", path,
                          n, err);
            hr_profile_free(&p);
            continue;
        }
        ck_assert_msg(r == 0, "%s cut at %zu: %s", path, n, err);
        ck_assert_msg(p.cut.cut && p.cut.size == n && p.cut.complete <= n,
                      "%s cut at %zu: not marked cut", path, n);
        ck_assert_msg(p.ncontexts >= last_ctx && sum_allocs(&p) >= last_allocs,
                      "%s cut at %zu: %zu contexts, %llu allocations, fewer than before", path,
                      n, p.ncontexts, (unsigned long long)sum_allocs(&p));
        ck_assert_msg(p.ncontexts + p.cut.dropped_contexts <= whole.ncontexts,
                      "%s cut at %zu: more contexts than the whole file", path, n);
        last_ctx = p.ncontexts;
        last_allocs = sum_allocs(&p);
        for (size_t i = 0; i < p.ncontexts; i++)
            same_context(&whole, &p.contexts[i], n);
        if (p.cut.summary_rebuilt)
            ck_assert(p.summary.total_allocs == last_allocs && p.summary.contexts == p.ncontexts);
        else
            ck_assert(memcmp(&p.summary, &whole.summary, sizeof p.summary) == 0);
        if (n % every == 0 || n + 1 == len)
            write_all(&p);
        ok++;
        hr_profile_free(&p);
    }
    /* Just before END the contexts are all there. */
    ck_assert_uint_eq(last_ctx, whole.ncontexts);
    ck_assert_uint_eq(last_allocs, sum_allocs(&whole));
    ck_assert(ok > len / 2);
    hr_profile_free(&whole);
}

START_TEST(every_cut_of_a_real_profile)
{
    size_t len;
    uint8_t *data = read_all(corpus[_i], &len);
    cut_everywhere(corpus[_i], data, len, 64);
    free(data);
}
END_TEST

/* The offsets at which the records of a profile start; returns how many (at most max). */
static size_t record_starts(const uint8_t *d, size_t len, size_t *starts, size_t max)
{
    size_t n = 0;
    for (size_t off = 32; off + 16 <= len && n < max;) {
        starts[n++] = off;
        struct hpf_record_header rh;
        memcpy(&rh, d + off, sizeof rh);
        off += 16 + ((rh.size + 7) & ~(uint64_t)7);
    }
    return n;
}

/* A profile in the shim's order with what the corpus lacks: HIBs evicted during the run first
 * (the spool), STACK records instead of the frame tree (a shim that could not map the memory
 * to sort stacks in), a context whose blocks are all in evicted HIBs, one with blocks still
 * live, LIVE and HIB records in several PACKED records. */
START_TEST(every_cut_of_a_spooled_profile)
{
    struct ht_buf b = {0};
    ht_file_header(&b);
    struct hpf_hib spool[3] = {
        {.context_id = 1, .flags = HPF_HIB_EVICTED, .alloc_count = 4, .total_size = 40,
         .min_size = 10, .max_size = 10, .total_lifetime_ms = 8, .max_lifetime_ms = 2},
        {.context_id = 2, .flags = HPF_HIB_EVICTED, .alloc_count = 7, .total_size = 700,
         .min_size = 100, .max_size = 100},
        {.context_id = 1, .flags = HPF_HIB_EVICTED, .alloc_count = 1, .total_size = 10,
         .min_size = 10, .max_size = 10, .total_lifetime_ms = 5, .max_lifetime_ms = 5},
    };
    for (int i = 0; i < 3; i++)
        ht_record(&b, HPF_REC_HIB, &spool[i], sizeof spool[i]);
    static const char *const argv[] = {"./prog"};
    struct hpf_process pr = {.pid = 7, .dump_reason = HPF_DUMP_EXIT, .stack_depth = 64,
                             .argc = 1, .dump_ms = 50};
    ht_process_alloc(&b, &pr, "next", "/usr/bin/prog", argv, "/lib/libc.so.6");
    struct hpf_segment seg = {.start = 0x400000, .end = 0x500000, .prot = 5};
    ht_module(&b, 0, &seg, 1, NULL, 0, "/usr/bin/prog");
    const uint64_t pcs[4][3] = {{0}, {0x401000, 0x402000}, {0x401100, 0x402000},
                                {0x401200, 0x402000, 0x403000}};
    for (uint32_t id = 1; id <= 3; id++)
        ht_stack(&b, id, pcs[id], id == 3 ? 3 : 2);
    struct hpf_hib folded = {.context_id = 3, .flags = HPF_HIB_LIVE_FOLDED, .alloc_count = 2,
                             .total_size = 64, .min_size = 32, .max_size = 32};
    ht_packed(&b, HPF_REC_HIB, &folded, 1, HPF_HIB_NFIELDS);
    struct hpf_live live[3] = {
        {.context_id = 1, .allocs = 8, .bytes = 80, .max_live_count = 1, .max_live_size = 10},
        {.context_id = 2, .allocs = 7, .bytes = 700, .max_live_count = 7, .max_live_size = 700},
        {.context_id = 3, .allocs = 5, .bytes = 160, .live_count = 2, .live_size = 64},
    };
    ht_packed(&b, HPF_REC_LIVE, &live[0], 2, HPF_LIVE_NFIELDS);
    ht_packed(&b, HPF_REC_LIVE, &live[2], 1, HPF_LIVE_NFIELDS);
    struct hpf_hib table[2] = {
        {.context_id = 3, .alloc_count = 3, .total_size = 96, .min_size = 32, .max_size = 32},
        {.context_id = 1, .alloc_count = 3, .total_size = 30, .min_size = 10, .max_size = 10},
    };
    ht_packed(&b, HPF_REC_HIB, &table[0], 1, HPF_HIB_NFIELDS);
    ht_packed(&b, HPF_REC_HIB, &table[1], 1, HPF_HIB_NFIELDS);
    struct hpf_summary sum = {.total_allocs = 20, .total_frees = 18, .total_bytes = 940,
                              .live_count = 2, .live_size = 64, .contexts = 3,
                              .peak_live_size = 800, .evicted_hibs = 3};
    ht_record(&b, HPF_REC_SUMMARY, &sum, sizeof sum);
    ht_end(&b);
    cut_everywhere("spooled.hpf", b.data, b.len, 1);
    /* Cut before the table's HIBs: only context 2, whose blocks were all evicted, is whole;
     * after the first of them context 3 is too. */
    size_t starts[16];
    ck_assert_uint_eq(record_starts(b.data, b.len, starts, 16), 15);
    static const struct {
        size_t rec, n;
        uint32_t ids[2];
    } want[] = {{11, 1, {2}}, {12, 2, {2, 3}}};
    for (size_t w = 0; w < 2; w++) {
        struct hr_profile p;
        char err[HR_ERR_MAX];
        size_t n = starts[want[w].rec];
        ck_assert_msg(hr_profile_parse(&p, "s", ht_copy(b.data, n), n, err) == 0, "%s", err);
        ck_assert_uint_eq(p.ncontexts, want[w].n);
        ck_assert_uint_eq(p.cut.dropped_contexts, 3 - want[w].n);
        for (size_t i = 0; i < want[w].n; i++)
            ck_assert_uint_eq(p.contexts[i].context_id, want[w].ids[i]);
        hr_profile_free(&p);
    }
    free(b.data);
}
END_TEST

/* A clean cut is read; damage at the same place is not: an unknown record type running past
 * the end, a partial header of an unknown type, bytes after END, a lying END count. */
START_TEST(damage_is_not_a_cut)
{
    size_t len;
    uint8_t *data = read_all(corpus[0], &len);
    size_t starts[64];
    size_t nrec = record_starts(data, len, starts, 64);
    ck_assert(nrec > 4);
    size_t at = starts[nrec - 3]; /* a record well inside the dump */
    char err[HR_ERR_MAX];
    struct hr_profile p;
    /* Cut in its payload: read. */
    ck_assert_msg(hr_profile_parse(&p, "x", ht_copy(data, at + 20), at + 20, err) == 0, "%s",
                  err);
    ck_assert_uint_eq(p.cut.complete, at);
    hr_profile_free(&p);
    /* The same with an unknown type: damage. */
    uint8_t *d = ht_copy(data, at + 20);
    uint32_t bad = 99;
    memcpy(d + at, &bad, 4);
    ck_assert_int_eq(hr_profile_parse(&p, "x", d, at + 20, err), -1);
    ck_assert_msg(strstr(err, "overflows the file"), "%s", err);
    hr_profile_free(&p);
    d = ht_copy(data, at + 6);
    memcpy(d + at, &bad, 4);
    ck_assert_int_eq(hr_profile_parse(&p, "x", d, at + 6, err), -1);
    ck_assert_msg(strstr(err, "truncated record header"), "%s", err);
    hr_profile_free(&p);
    /* A complete record whose length lies inside the file stays an error (not a cut). */
    d = ht_copy(data, len);
    uint64_t lie = 3;
    memcpy(d + starts[0] + 8, &lie, 8); /* PROCESS shorter than its fixed part */
    ck_assert_int_eq(hr_profile_parse(&p, "x", d, len, err), -1);
    hr_profile_free(&p);
    /* Bytes after END. */
    d = malloc(len + 8);
    memcpy(d, data, len);
    memset(d + len, 0, 8);
    ck_assert_int_eq(hr_profile_parse(&p, "x", d, len + 8, err), -1);
    ck_assert_msg(strstr(err, "after the END record"), "%s", err);
    hr_profile_free(&p);
    /* A wrong version or endianness in a cut file is still refused. */
    d = ht_copy(data, at + 20);
    uint32_t v = 77;
    memcpy(d + 8, &v, 4);
    ck_assert_int_eq(hr_profile_parse(&p, "x", d, at + 20, err), -1);
    ck_assert_msg(strstr(err, "unsupported format version"), "%s", err);
    hr_profile_free(&p);
    free(data);
}
END_TEST

/* Merges and diffs of cut profiles: the merged profile says so; a complete dump of a process
 * is preferred to a cut one of the same process. */
START_TEST(merge_and_diff_cut_profiles)
{
    size_t len;
    uint8_t *data = read_all(corpus[0], &len);
    size_t len2;
    uint8_t *data2 = read_all(corpus[1], &len2);
    char err[HR_ERR_MAX];
    for (size_t n = len / 2; n < len; n += 61) {
        struct hr_profile in[3];
        ck_assert_int_eq(hr_profile_parse(&in[0], "a", ht_copy(data, n), n, err), 0);
        ck_assert_int_eq(hr_profile_parse(&in[1], "b", ht_copy(data2, len2 - 100),
                                          len2 - 100, err), 0);
        ck_assert_int_eq(hr_profile_parse(&in[2], "c", ht_copy(data, len), len, err), 0);
        struct hr_profile *v[3] = {&in[0], &in[1], &in[2]};
        struct hr_profile m;
        ck_assert_int_eq(hr_profiles_merge(&m, v, 2, err), 0);
        ck_assert(m.cut.cut && m.cut.files == 2);
        write_all(&m);
        hr_profile_free(&m);
        /* a's complete dump (c) supersedes its cut one: only b is cut among those used */
        ck_assert_int_eq(hr_profiles_merge(&m, v, 3, err), 0);
        ck_assert(m.cut.cut && m.cut.files == 1);
        ck_assert(!m.sources[0].used && m.sources[0].cut && m.sources[2].used);
        hr_profile_free(&m);
        struct hr_profile d, base;
        ck_assert_int_eq(hr_profiles_diff(&d, &base, &in[0], v + 1, 1, err), 0);
        write_all(&d);
        hr_profile_free(&d);
        hr_profile_free(&base);
        for (int i = 0; i < 3; i++)
            hr_profile_free(&in[i]);
    }
    free(data);
    free(data2);
}
END_TEST

int main(void)
{
    devnull = fopen("/dev/null", "w");
    TCase *tc = ht_tcase("report_cut", "cut", 600);
    tcase_add_loop_test(tc, every_cut_of_a_real_profile, 0, NCORPUS);
    tcase_add_test(tc, every_cut_of_a_spooled_profile);
    tcase_add_test(tc, damage_is_not_a_cut);
    tcase_add_test(tc, merge_and_diff_cut_profiles);
    return ht_run();
}
