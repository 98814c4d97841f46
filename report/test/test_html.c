/* Unit tests of the HTML page: it is self-contained (no URL, no external resource, every
 * marker of the template replaced), its data is valid JSON that no string can break out of,
 * the title is escaped, several input profiles make the timeline, and a 50,000-context
 * profile stays a few megabytes. (test/integration/cases/report-html.sh runs the page in
 * headless Chromium.) */
#include <check.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"
#include "hpf_writer.h"
#include "hr_output.h"
#include "hr_profile.h"
#include "html_internal.h"
#include "big_profile.h"
#include "json_check.h"

static struct hr_profile *parse_buf(struct ht_buf *b, const char *path)
{
    struct hr_profile *p = malloc(sizeof *p);
    char err[HR_ERR_MAX];
    ck_assert_msg(hr_profile_parse(p, path, ht_copy(b->data, b->len), b->len, err) == 0, "%s",
                  err);
    return p;
}

static char *page(const struct hr_profile *p, struct hr_profile *const *inputs, size_t n)
{
    FILE *f = tmpfile();
    struct hr_output_opts o = {.sort = HR_SORT_TOTAL_SIZE, .inputs = inputs, .ninputs = n};
    ck_assert_int_eq(hr_write_html(f, p, &o), 0);
    char *out = ht_slurp(f);
    fclose(f);
    return out;
}

static size_t count(const char *s, const char *what)
{
    size_t n = 0;
    for (const char *q = strstr(s, what); q; q = strstr(q + 1, what))
        n++;
    return n;
}

/* The JSON text of the page's data element, as a new string. */
static char *data_of(const char *html)
{
    const char *open = "<script type=\"application/json\" id=\"hp-data\">";
    const char *a = strstr(html, open);
    ck_assert_ptr_nonnull(a);
    a += strlen(open);
    const char *z = strstr(a, "</script>");
    ck_assert_ptr_nonnull(z);
    char *d = strndup(a, (size_t)(z - a));
    ck_assert_msg(ht_json_valid(d), "data is not JSON: %.300s", d);
    return d;
}

static void drop(struct hr_profile *p)
{
    hr_profile_free(p);
    free(p);
}

START_TEST(self_contained)
{
    struct ht_buf b = {0};
    ht_sample(&b);
    struct hr_profile *p = parse_buf(&b, "dir/s.hpf");
    char *html = page(p, NULL, 0);
    ck_assert_msg(strncmp(html, "<!DOCTYPE html>\n", 16) == 0, "%.40s", html);
    ck_assert_ptr_nonnull(strstr(html, "</html>\n"));
    /* nothing fetched from anywhere */
    const char *external[] = {"http:", "https:", "//cdn", "<link", " src=", "@import", "url(",
                              "@@"};
    for (size_t i = 0; i < sizeof external / sizeof external[0]; i++)
        ck_assert_msg(!strstr(html, external[i]), "page holds %s", external[i]);
    /* one style sheet, the data and the script, each once */
    ck_assert_uint_eq(count(html, "<style>"), 1);
    ck_assert_uint_eq(count(html, "<script"), 2);
    ck_assert_uint_eq(count(html, "</script>"), 2);
    ck_assert_uint_eq(count(html, "id=\"hp-data\""), 1);
    ck_assert_ptr_nonnull(strstr(html, "<title>heapprof: ./prog --flag x y</title>"));
    ck_assert_ptr_nonnull(strstr(html, "function flameValues(")); /* report.js is in */
    ck_assert_ptr_nonnull(strstr(html, "#flame-wrap {"));         /* report.css is in */
    char *d = data_of(html);
    ck_assert_ptr_nonnull(strstr(d, "\"file\":\"dir/s.hpf\""));
    ck_assert_ptr_nonnull(strstr(d, "\"argv\":[\"./prog\",\"--flag\",\"x y\"]"));
    ck_assert_ptr_nonnull(strstr(d, "\"allocator\":\"/lib/x86_64-linux-gnu/libc.so.6\""));
    ck_assert_ptr_nonnull(strstr(d, "\"peak_live_size\":2048,"));
    ck_assert_ptr_nonnull(strstr(d, "\"access\":null,\"diff\":0,\"metric\":\"alloc_bytes\""));
    /* frames of unknown addresses: their address as the name; nodes from the outermost */
    ck_assert_ptr_nonnull(strstr(d, "\"strs\":[\"\",\"0x401100\",\"0x401000\",\"0x402000\"]"));
    ck_assert_ptr_nonnull(strstr(d, "\"nodes\":[1,0,1,1,3,2]"));
    /* rows in --sort order: id, node, the eight metrics, min and max size, writes, pool */
    ck_assert_ptr_nonnull(strstr(d, "\"ctx\":[2,3,3096,20,0,0,0,0,0,10,8,2048,0,0,"
                                    "1,2,1000,10,500,5,400,4,0,50,100,100,0,0]"));
    ck_assert_ptr_nonnull(strstr(d, "\"hist\":[]"));
    ck_assert_ptr_nonnull(strstr(d, "\"timeline\":[[1234,0,2000,500,5,4096,1,1500,2048,1000]]"));
    free(d);
    free(html);
    drop(p);
    free(b.data);
}
END_TEST

START_TEST(strings_cannot_break_out)
{
    FILE *f = tmpfile();
    hr_html_json_string(f, "</script><b>\"\\\n\x01\xff caf\xc3\xa9", 23);
    char *out = ht_slurp(f);
    fclose(f);
    ck_assert_str_eq(out, "\"\\u003c/script>\\u003cb>\\\"\\\\\\u000a\\u0001\\ufffd caf\xc3\xa9\"");
    ck_assert(ht_json_valid(out));
    free(out);

    /* the title is HTML: escaped there */
    struct ht_buf b = {0};
    static const char *const argv[] = {"./x", "<b>&\"'"};
    struct hpf_process pr = {.pid = 5, .argc = 2};
    ht_file_header(&b);
    ht_process(&b, &pr, "glibc", "/x", argv);
    struct hpf_summary s = {0};
    ht_record(&b, HPF_REC_SUMMARY, &s, sizeof s);
    ht_end(&b);
    struct hr_profile *p = parse_buf(&b, "</script>.hpf");
    char *html = page(p, NULL, 0);
    ck_assert_ptr_nonnull(strstr(html, "<title>heapprof: ./x &lt;b&gt;&amp;&quot;'</title>"));
    ck_assert_uint_eq(count(html, "</script>"), 2);
    char *d = data_of(html);
    ck_assert_ptr_nonnull(strstr(d, "\"file\":\"\\u003c/script>.hpf\""));
    ck_assert_ptr_nonnull(strstr(d, "\"ctx\":[]"));
    free(d);
    free(html);
    drop(p);
    free(b.data);
}
END_TEST

START_TEST(timeline_of_inputs)
{
    struct hr_profile *v[3];
    for (int i = 0; i < 3; i++) {
        struct ht_buf b = {0};
        ht_sample(&b);
        v[i] = parse_buf(&b, "p.hpf");
        v[i]->process.dump_seq = (uint32_t)i + 1;
        v[i]->process.dump_ms = 100u * (uint32_t)(i + 1);
        v[i]->summary.live_size = 1000u * (uint32_t)(i + 1);
        free(b.data);
    }
    char *html = page(v[2], v, 3);
    char *d = data_of(html);
    ck_assert_ptr_nonnull(strstr(d, "\"timeline\":[[1234,1,100,1000,5,4096,1,1500,2048,1000],"
                                    "[1234,2,200,2000,5,4096,1,1500,2048,1000],"
                                    "[1234,3,300,3000,5,4096,1,1500,2048,1000]]"));
    free(d);
    free(html);
    for (int i = 0; i < 3; i++)
        drop(v[i]);
}
END_TEST

/* A diff profile: the figures are new minus base, negative where the new one has less. */
START_TEST(diff_rows)
{
    struct ht_buf b = {0};
    ht_sample(&b);
    struct hr_profile *base = parse_buf(&b, "base.hpf"), *p = parse_buf(&b, "new.hpf");
    struct hr_context *c1 = hr_context_find(base, 1), *c2 = hr_context_find(base, 2);
    c1->live.bytes += 500;     /* the new profile allocated 500 bytes less here */
    c2->live.live_size = 100;  /* and leaked 100 bytes less here */
    p->diff_base = base;
    for (size_t i = 0; i < p->ncontexts; i++)
        p->contexts[i].base = hr_context_find(base, p->contexts[i].context_id);
    char *html = page(p, NULL, 0);
    char *d = data_of(html);
    ck_assert_ptr_nonnull(strstr(d, "\"diff\":1,"));
    /* in a diff, contexts come by the size of their change: -500 before -100 */
    ck_assert_ptr_nonnull(strstr(d, "\"ctx\":[1,2,-500,0,0,0,0,0,0,0,100,100,0,0,"
                                    "2,3,0,0,-100,0,0,0,0,0,8,2048,0,0]"));
    free(d);
    free(html);
    drop(p);
    drop(base);
    free(b.data);
}
END_TEST

/* 50,000 contexts (big_profile.h): the data holds each frame and path once, so the page
 * stays a few megabytes. */
START_TEST(large_profile_stays_small)
{
    struct ht_buf b = {0};
    ht_big_profile(&b, 50000);
    struct hr_profile *p = parse_buf(&b, "big.hpf");
    char *html = page(p, NULL, 0);
    size_t len = strlen(html);
    ck_assert_msg(len < 8u << 20, "page of %zu bytes", len);
    char *d = data_of(html);
    ck_assert_uint_eq(count(d, "/nonexistent"), 1); /* the module's name once */
    free(d);
    free(html);
    drop(p);
    free(b.data);
}
END_TEST

int main(void)
{
    TCase *tc = ht_tcase("report_html", "html", 120);
    tcase_add_test(tc, self_contained);
    tcase_add_test(tc, strings_cannot_break_out);
    tcase_add_test(tc, timeline_of_inputs);
    tcase_add_test(tc, diff_rows);
    tcase_add_test(tc, large_profile_stays_small);
    return ht_run();
}
