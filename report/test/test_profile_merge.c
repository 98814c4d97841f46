/* Unit tests of merging profiles and of diffs (hr_merge.h): modules matched by build id or path
 * and laid out without overlaps, frames outside modules kept, dumps of one process superseded,
 * processes added, figures merged, and the diff's contexts, changes, JSON and text. */
#include <check.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"
#include "hpf_writer.h"
#include "hr_cli.h"
#include "hr_merge.h"
#include "hr_metric.h"
#include "hr_output.h"
#include "hr_profile.h"
#include "hr_symbolize.h"
#include "json_check.h"

/* One context of a synthetic profile: its stack and count blocks of size bytes, live of them
 * still live at the dump, peak bytes of it at the process's peak. */
struct ctx_spec {
    uint32_t id, depth;
    uint64_t pcs[4];
    uint64_t count, size, live, peak;
    int no_stack;
};

struct prof_spec {
    uint32_t pid, reason, seq;
    uint64_t start, dump_ms;
    uint64_t bias;   /* module 1: segment [bias + 0x1000, bias + 0x3000), if path */
    const char *bid; /* its build id ("" none) */
    const char *path;
    uint64_t bias2; /* module 2: [bias2 + 0x1000, bias2 + 0x2000), if path2 */
    const char *bid2;
    const char *path2;
    struct ctx_spec ctx[4];
};

static void add_module(struct ht_buf *b, uint64_t bias, uint64_t len, const char *bid,
                       const char *path)
{
    struct hpf_segment seg = {.start = bias + 0x1000, .end = bias + 0x1000 + len, .prot = 5};
    ht_module(b, bias, &seg, 1, (const uint8_t *)bid, (uint32_t)strlen(bid), path);
}

static struct ht_buf build(const struct prof_spec *s)
{
    struct ht_buf b = {0};
    ht_file_header(&b);
    struct hpf_process pr = {.pid = s->pid, .start_unix_ns = s->start, .dump_ms = s->dump_ms,
                             .dump_reason = s->reason ? s->reason : HPF_DUMP_EXIT,
                             .dump_seq = s->seq};
    ht_process(&b, &pr, "glibc", "/bin/prog", NULL);
    struct hpf_summary sum = {0};
    for (const struct ctx_spec *c = s->ctx; c->id; c++) {
        sum.total_allocs += c->count;
        sum.total_bytes += c->count * c->size;
        sum.peak_live_size += c->peak;
        sum.contexts++;
    }
    ht_record(&b, HPF_REC_SUMMARY, &sum, sizeof sum);
    if (s->path)
        add_module(&b, s->bias, 0x2000, s->bid ? s->bid : "", s->path);
    if (s->path2)
        add_module(&b, s->bias2, 0x1000, s->bid2 ? s->bid2 : "", s->path2);
    for (const struct ctx_spec *c = s->ctx; c->id; c++) {
        if (!c->no_stack)
            ht_stack(&b, c->id, c->pcs, c->depth);
        struct hpf_hib h = {.context_id = c->id, .alloc_count = c->count,
                            .total_size = c->count * c->size, .min_size = c->size,
                            .max_size = c->size};
        struct hpf_live l = {.context_id = c->id, .allocs = c->count, .bytes = c->count * c->size,
                             .live_count = c->live, .live_size = c->live * c->size,
                             .max_live_count = c->live, .max_live_size = c->live * c->size,
                             .peak_live_size = c->peak, .first_alloc_ms = 5, .last_alloc_ms = 9};
        ht_record(&b, HPF_REC_HIB, &h, sizeof h);
        ht_record(&b, HPF_REC_LIVE, &l, sizeof l);
    }
    ht_end(&b);
    return b;
}

static struct hr_profile *mk(const struct prof_spec *s, const char *name)
{
    struct ht_buf b = build(s);
    struct hr_profile *p = malloc(sizeof *p);
    char err[HR_ERR_MAX];
    ck_assert_msg(hr_profile_parse(p, name, ht_copy(b.data, b.len), b.len, err) == 0, "%s", err);
    free(b.data);
    return p;
}

static void drop(struct hr_profile *p)
{
    hr_profile_free(p);
    free(p);
}

/* The merged context whose innermost pc is pc, or NULL. */
static const struct hr_context *at(const struct hr_profile *p, uint64_t pc)
{
    for (size_t i = 0; i < p->ncontexts; i++)
        if (p->contexts[i].depth && p->contexts[i].pcs[0] == pc)
            return &p->contexts[i];
    return NULL;
}

static void merge(struct hr_profile *out, struct hr_profile **in, size_t n)
{
    char err[HR_ERR_MAX];
    ck_assert_msg(hr_profiles_merge(out, in, n, err) == 0, "%s", err);
}

/* Same build id at another load bias: one module, one context, at the first profile's place. */
START_TEST(same_module_other_bias)
{
    struct prof_spec a = {.pid = 1, .start = 10, .bias = 0x400000, .bid = "\x01\x02\x03",
                          .path = "/opt/a/prog",
                          .ctx = {{.id = 1, .depth = 2, .pcs = {0x401100, 0x401200}, .count = 2,
                                   .size = 10}}};
    struct prof_spec b = {.pid = 2, .start = 10, .bias = 0x7f0000000000, .bid = "\x01\x02\x03",
                          .path = "/other/path/prog",
                          .ctx = {{.id = 7, .depth = 2, .pcs = {0x7f0000001100, 0x7f0000001200},
                                   .count = 3, .size = 10},
                                  {.id = 8, .depth = 1, .pcs = {0x7f0000001300}, .count = 1,
                                   .size = 4}}};
    struct hr_profile *in[2] = {mk(&a, "a"), mk(&b, "b")};
    struct hr_profile out;
    merge(&out, in, 2);
    drop(in[0]); /* the merged profile does not point into its inputs */
    drop(in[1]);
    ck_assert_uint_eq(out.nmodules, 1);
    ck_assert_uint_eq(out.modules[0].load_bias, 0x400000);
    ck_assert_uint_eq(out.modules[0].build_id_len, 3);
    ck_assert(out.modules[0].path.len == 11 && memcmp(out.modules[0].path.ptr, "/opt/a/prog", 11) == 0);
    ck_assert_uint_eq(out.ncontexts, 2);
    const struct hr_context *c = at(&out, 0x401100);
    ck_assert_ptr_nonnull(c);
    ck_assert_uint_eq(c->depth, 2);
    ck_assert_uint_eq(c->pcs[1], 0x401200);
    ck_assert_uint_eq(c->hib.alloc_count, 5);
    ck_assert_uint_eq(c->live.bytes, 50);
    ck_assert_ptr_nonnull(at(&out, 0x401300));
    ck_assert_uint_eq(out.summary.total_allocs, 6);
    ck_assert_uint_eq(out.summary.contexts, 2);
    struct hr_symbolizer *sym = hr_symbolizer_new(&out, NULL);
    struct hr_frame f;
    hr_symbolize(sym, 0x401300, &f);
    ck_assert_str_eq(f.module, "/opt/a/prog");
    hr_symbolizer_free(sym);
    hr_profile_free(&out);
}
END_TEST

/* One path, two build ids: two files. The second cannot share the first's addresses. */
START_TEST(same_path_other_build_id)
{
    struct prof_spec a = {.pid = 1, .bias = 0x400000, .bid = "\x01", .path = "/bin/prog",
                          .ctx = {{.id = 1, .depth = 1, .pcs = {0x401100}, .count = 1, .size = 1}}};
    struct prof_spec b = {.pid = 2, .bias = 0x400000, .bid = "\x02", .path = "/bin/prog",
                          .ctx = {{.id = 1, .depth = 1, .pcs = {0x401100}, .count = 1, .size = 1}}};
    struct hr_profile *in[2] = {mk(&a, "a"), mk(&b, "b")};
    struct hr_profile out;
    merge(&out, in, 2);
    ck_assert_uint_eq(out.nmodules, 2);
    ck_assert_uint_eq(out.ncontexts, 2);
    const struct hr_module *m0 = &out.modules[0], *m1 = &out.modules[1];
    ck_assert_uint_eq(m0->load_bias, 0x400000);
    ck_assert(m1->segs[0].start >= m0->segs[0].end || m1->segs[0].end <= m0->segs[0].start);
    ck_assert_uint_eq(m1->segs[0].start - m1->load_bias, 0x1000); /* the layout kept */
    ck_assert_uint_eq(m1->load_bias % (2u << 20), 0);
    /* The second profile's context sits at the same offset in the moved module. */
    ck_assert_ptr_nonnull(at(&out, 0x401100));
    ck_assert_ptr_nonnull(at(&out, m1->load_bias + 0x1100));
    hr_profile_free(&out);
    drop(in[0]);
    drop(in[1]);
}
END_TEST

/* A frame in no module keeps its pc; a module over that address must move away from it. */
START_TEST(raw_frame_kept)
{
    struct prof_spec a = {.pid = 1, .bias = 0x400000, .path = "/bin/a",
                          .ctx = {{.id = 1, .depth = 1, .pcs = {0x401100}, .count = 1, .size = 1}}};
    struct prof_spec b = {.pid = 2,
                          .ctx = {{.id = 1, .depth = 1, .pcs = {0x401500}, .count = 2, .size = 3}}};
    struct hr_profile *in[2] = {mk(&a, "a"), mk(&b, "b")};
    struct hr_profile out;
    merge(&out, in, 2);
    ck_assert_uint_eq(out.nmodules, 1);
    uint64_t bias = out.modules[0].load_bias;
    ck_assert_uint_ne(bias, 0x400000);
    const struct hr_context *raw = at(&out, 0x401500);
    ck_assert_ptr_nonnull(raw);
    ck_assert_uint_eq(raw->hib.total_size, 6);
    ck_assert_ptr_nonnull(at(&out, bias + 0x1100));
    struct hr_symbolizer *sym = hr_symbolizer_new(&out, NULL);
    struct hr_frame f;
    hr_symbolize(sym, 0x401500, &f);
    ck_assert_str_eq(f.module, "");
    hr_symbolize(sym, bias + 0x1100, &f);
    ck_assert_str_eq(f.module, "/bin/a");
    hr_symbolizer_free(sym);
    hr_profile_free(&out);
    drop(in[0]);
    drop(in[1]);
}
END_TEST

#define ONE_CTX(n) {{.id = 3, .depth = 1, .pcs = {0x401100}, .count = (n), .size = 10}}

/* Dumps of one process (pid and start time) are snapshots: the exit profile, else the latest,
 * counts alone. An exec'd image (same pid, new start) is another process. */
START_TEST(latest_dump_of_a_process)
{
    struct prof_spec s[4] = {
        {.pid = 5, .start = 100, .dump_ms = 20, .reason = HPF_DUMP_EXIT, .seq = 2,
         .bias = 0x400000, .path = "/bin/p", .ctx = ONE_CTX(5)},
        {.pid = 5, .start = 100, .dump_ms = 10, .reason = HPF_DUMP_INTERVAL, .seq = 0,
         .bias = 0x400000, .path = "/bin/p", .ctx = ONE_CTX(2)},
        {.pid = 5, .start = 100, .dump_ms = 20, .reason = HPF_DUMP_INTERVAL, .seq = 1,
         .bias = 0x400000, .path = "/bin/p", .ctx = ONE_CTX(4)},
        {.pid = 5, .start = 200, .dump_ms = 3, .reason = HPF_DUMP_EXIT, .bias = 0x500000,
         .path = "/bin/p", .ctx = {{.id = 3, .depth = 1, .pcs = {0x501100}, .count = 1, .size = 10}}},
    };
    struct hr_profile *in[4];
    for (int i = 0; i < 4; i++)
        in[i] = mk(&s[i], i == 0 ? "p.hpf" : i == 1 ? "p.hpf.1" : i == 2 ? "p.hpf.2" : "q.hpf");
    struct hr_profile out;
    merge(&out, in, 4);
    ck_assert_uint_eq(out.ncontexts, 1);
    ck_assert_uint_eq(out.contexts[0].hib.alloc_count, 6); /* 5 (exit) + 1 (the exec'd one) */
    ck_assert_uint_eq(out.summary.total_allocs, 6);
    ck_assert_uint_eq(out.nsources, 4);
    ck_assert(out.sources[0].used && out.sources[3].used);
    ck_assert(!out.sources[1].used && !out.sources[2].used);
    ck_assert_int_eq(out.sources[1].superseded_by, 0);
    ck_assert_int_eq(out.sources[2].superseded_by, 0);
    ck_assert_str_eq(out.sources[2].path, "p.hpf.2");
    ck_assert_str_eq(out.path, "p.hpf (+3 more profiles)");
    hr_profile_free(&out);
    /* Without the exit profile, the later interval dump wins. */
    merge(&out, in + 1, 2);
    ck_assert_uint_eq(out.contexts[0].hib.alloc_count, 4);
    ck_assert(!out.sources[0].used && out.sources[1].used);
    hr_profile_free(&out);
    for (int i = 0; i < 4; i++)
        drop(in[i]);
}
END_TEST

/* Processes add: counts and totals summed, minima and maxima kept, peaks summed (what the
 * processes would hold if their peaks coincided), live figures summed. */
START_TEST(processes_add)
{
    struct prof_spec a = {.pid = 1, .bias = 0x400000, .path = "/bin/p",
                          .ctx = {{.id = 1, .depth = 1, .pcs = {0x401100}, .count = 4, .size = 8,
                                   .live = 1, .peak = 16}}};
    struct prof_spec b = {.pid = 2, .bias = 0x600000, .path = "/bin/p",
                          .ctx = {{.id = 9, .depth = 1, .pcs = {0x601100}, .count = 2, .size = 100,
                                   .live = 2, .peak = 200}}};
    struct hr_profile *in[2] = {mk(&a, "a"), mk(&b, "b")};
    struct hr_profile out;
    merge(&out, in, 2);
    ck_assert_uint_eq(out.ncontexts, 1);
    const struct hr_context *c = &out.contexts[0];
    ck_assert_uint_eq(c->context_id, 1);
    ck_assert_uint_eq(c->hib.context_id, 1);
    ck_assert_uint_eq(c->hib.alloc_count, 6);
    ck_assert_uint_eq(c->hib.total_size, 232);
    ck_assert_uint_eq(c->hib.min_size, 8);
    ck_assert_uint_eq(c->hib.max_size, 100);
    ck_assert_uint_eq(c->live.allocs, 6);
    ck_assert_uint_eq(c->live.live_count, 3);
    ck_assert_uint_eq(c->live.live_size, 208);
    ck_assert_uint_eq(c->live.peak_live_size, 216);
    ck_assert_uint_eq(c->live.first_alloc_ms, 5);
    ck_assert_uint_eq(out.summary.peak_live_size, 216);
    ck_assert_uint_eq(out.summary.total_bytes, 232);
    ck_assert_uint_eq(out.process.pid, 1);
    hr_profile_free(&out);
    drop(in[0]);
    drop(in[1]);
}
END_TEST

/* Contexts without a recorded stack cannot be matched: each stays its own. */
START_TEST(stackless_not_matched)
{
    struct prof_spec a = {.pid = 1, .ctx = {{.id = 1, .no_stack = 1, .count = 1, .size = 1}}};
    struct prof_spec b = {.pid = 2, .ctx = {{.id = 1, .no_stack = 1, .count = 1, .size = 1},
                                            {.id = 2, .depth = 0, .count = 1, .size = 1}}};
    struct hr_profile *in[2] = {mk(&a, "a"), mk(&b, "b")};
    struct hr_profile out;
    merge(&out, in, 2);
    ck_assert_uint_eq(out.ncontexts, 3);
    hr_profile_free(&out);
    drop(in[0]);
    drop(in[1]);
}
END_TEST

static struct prof_spec diff_base = {
    .pid = 1, .bias = 0x400000, .path = "/bin/p",
    .ctx = {{.id = 1, .depth = 1, .pcs = {0x401100}, .count = 2, .size = 10},
            {.id = 2, .depth = 1, .pcs = {0x401200}, .count = 3, .size = 50, .live = 1}}};
static struct prof_spec diff_new = {
    .pid = 2, .bias = 0x500000, .path = "/bin/p",
    .ctx = {{.id = 4, .depth = 1, .pcs = {0x501100}, .count = 5, .size = 10},
            {.id = 5, .depth = 1, .pcs = {0x501300}, .count = 1, .size = 7}}};

START_TEST(diff_contexts)
{
    struct hr_profile *base = mk(&diff_base, "base"), *nw = mk(&diff_new, "new");
    struct hr_profile out, bout;
    char err[HR_ERR_MAX];
    ck_assert_msg(hr_profiles_diff(&out, &bout, base, &nw, 1, err) == 0, "%s", err);
    drop(base);
    drop(nw);
    ck_assert_ptr_eq(out.diff_base, &bout);
    ck_assert_uint_eq(out.ncontexts, 3);
    /* The new side keeps its addresses; the base is laid out in the same space. */
    const struct hr_context *x = at(&out, 0x501100), *y = at(&out, 0x501200),
                            *z = at(&out, 0x501300);
    ck_assert(x && y && z);
    ck_assert_ptr_nonnull(x->base);
    ck_assert_uint_eq(x->base->hib.alloc_count, 2);
    ck_assert_int_eq(hr_metric_value(&out, x, HR_METRIC_ALLOC_BYTES), 30);
    ck_assert_int_eq(hr_metric_value(&out, x, HR_METRIC_ALLOC_COUNT), 3);
    ck_assert_ptr_nonnull(y->base); /* only in the base: zero figures */
    ck_assert(!y->has_hib && !y->has_live && y->hib.alloc_count == 0);
    ck_assert_int_eq(hr_metric_value(&out, y, HR_METRIC_ALLOC_BYTES), -150);
    ck_assert_int_eq(hr_metric_value(&out, y, HR_METRIC_INUSE_BYTES), -50);
    ck_assert_ptr_null(z->base);
    ck_assert_int_eq(hr_metric_value(&out, z, HR_METRIC_ALLOC_BYTES), 7);
    /* Order: by the size of the change, growth and shrinkage alike. */
    struct hr_context **v = hr_contexts_sorted(&out, HR_SORT_TOTAL_SIZE);
    ck_assert(v[0] == y && v[1] == x && v[2] == z);
    free(v);

    struct hr_profile *pv = &out;
    struct hr_output_opts opts = {.sort = HR_SORT_TOTAL_SIZE, .top = 20};
    FILE *f = tmpfile();
    ck_assert_int_eq(hr_write_json(f, &pv, 1, &opts), 0);
    char *js = ht_slurp(f);
    fclose(f);
    ck_assert_msg(ht_json_valid(js), "%s", js);
    ck_assert(strstr(js, "\"diff_base\": {\n    \"file\": \"base\",\n    \"pid\": 1,\n"));
    ck_assert(strstr(js, "\"contexts_only_in_base\": 1\n"));
    ck_assert_msg(strstr(js, "\"in_base\": true,\n      \"delta\": {\"alloc_bytes\": -150, "
                             "\"alloc_count\": -3, \"inuse_bytes\": -50, \"inuse_count\": -1, "),
                  "%s", js);
    ck_assert(strstr(js, "\"in_base\": false,\n      \"delta\": {\"alloc_bytes\": 7, "));
    free(js);
    f = tmpfile();
    ck_assert_int_eq(hr_write_text(f, &pv, 1, &opts), 0);
    char *t = ht_slurp(f);
    fclose(f);
    char *grew = strstr(t, "grew: top 2 of 2 contexts by total_size change\n");
    char *shrank = strstr(t, "shrank: top 1 of 1 contexts by total_size change\n");
    ck_assert_msg(grew && shrank && grew < shrank, "%s", t);
    ck_assert_msg(strstr(grew, "#1  context 1: +30 B total_size\n"), "%s", t);
    ck_assert_msg(strstr(grew, "#2  context 2 (new): +7 B total_size\n"), "%s", t);
    ck_assert_msg(strstr(shrank, "#1  context 3 (gone): -150 B total_size\n"), "%s", t);
    ck_assert(strstr(t, "  contexts     1 in both, 1 only in this profile, 1 only in the base\n"));
    free(t);
    hr_profile_free(&out);
    hr_profile_free(&bout);
}
END_TEST

/* The command line: --merge and --diff through hr_cli_run, on files. */
static char *file_of(const struct prof_spec *s)
{
    struct ht_buf b = build(s);
    char *path = ht_tmpfile(b.data, b.len);
    free(b.data);
    return path;
}

START_TEST(cli_merge_and_diff)
{
    char *a = file_of(&diff_base), *b = file_of(&diff_new), *out;
    char *merge_args[] = {"heapprof-report", "--merge", "-f", "json", a, b, NULL};
    ck_assert_int_eq(ht_cli(6, merge_args, &out, NULL), HR_EXIT_OK);
    ck_assert_msg(out[0] == '{' && ht_json_valid(out), "%s", out);
    ck_assert(strstr(out, "\"merged_from\": [\n"));
    ck_assert(strstr(out, "\"alloc_count\": 7,")); /* 2 + 5 at the first stack */
    free(out);
    char *plain_args[] = {"heapprof-report", "-f", "json", a, b, NULL};
    ck_assert_int_eq(ht_cli(5, plain_args, &out, NULL), HR_EXIT_OK);
    ck_assert(out[0] == '['); /* one object per profile without --merge */
    free(out);
    char *diff_args[] = {"heapprof-report", "--diff", a, b, NULL};
    ck_assert_int_eq(ht_cli(4, diff_args, &out, NULL), HR_EXIT_OK);
    ck_assert_msg(strstr(out, "shrank: top 1 of 1"), "%s", out);
    free(out);
    char *missing_args[] = {"heapprof-report", "--diff", "/nonexistent.hpf", b, NULL};
    ck_assert_int_eq(ht_cli(4, missing_args, &out, NULL), HR_EXIT_FAIL);
    free(out);
    unlink(a);
    unlink(b);
    free(a);
    free(b);
}
END_TEST

int main(void)
{
    TCase *tc = ht_tcase("report_profile_merge", "merge", 0);
    tcase_add_test(tc, same_module_other_bias);
    tcase_add_test(tc, same_path_other_build_id);
    tcase_add_test(tc, raw_frame_kept);
    tcase_add_test(tc, latest_dump_of_a_process);
    tcase_add_test(tc, processes_add);
    tcase_add_test(tc, stackless_not_matched);
    tcase_add_test(tc, diff_contexts);
    tcase_add_test(tc, cli_merge_and_diff);
    return ht_run();
}
