/* Unit tests of the JSON output: string escaping of arbitrary bytes, the document shape for
 * one and several profiles, field values, and the order of contexts for every sort key. */
#include <check.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"
#include "hpf_writer.h"
#include "hr_output.h"
#include "hr_profile.h"
#include "json_check.h"

static char *escape(const char *s, size_t len)
{
    FILE *f = tmpfile();
    hr_json_string(f, s, len);
    char *out = ht_slurp(f);
    fclose(f);
    return out;
}

#define CHECK_ESCAPE(in, want)                                                                 \
    do {                                                                                       \
        char *got_ = escape(in, sizeof(in) - 1);                                               \
        ck_assert_str_eq(got_, want);                                                          \
        ck_assert(ht_json_valid(got_));                                                        \
        free(got_);                                                                            \
    } while (0)

START_TEST(escaping)
{
    CHECK_ESCAPE("plain", "\"plain\"");
    CHECK_ESCAPE("a\"b\\c/d", "\"a\\\"b\\\\c/d\"");
    CHECK_ESCAPE("\n\r\t\b\f", "\"\\n\\r\\t\\b\\f\"");
    CHECK_ESCAPE("\x01\x1f\x7f", "\"\\u0001\\u001f\x7f\"");
    CHECK_ESCAPE("nul\0byte", "\"nul\\u0000byte\"");
    CHECK_ESCAPE("caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80", "\"caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80\"");
    /* invalid: lone continuation, truncated sequence, overlong, surrogate, > U+10FFFF, 0xff */
    CHECK_ESCAPE("\x80", "\"\\ufffd\"");
    CHECK_ESCAPE("a\xc3", "\"a\\ufffd\"");
    CHECK_ESCAPE("\xc0\xaf", "\"\\ufffd\\ufffd\"");
    CHECK_ESCAPE("\xe0\x80\xaf", "\"\\ufffd\\ufffd\\ufffd\"");
    CHECK_ESCAPE("\xed\xa0\x80", "\"\\ufffd\\ufffd\\ufffd\"");
    CHECK_ESCAPE("\xf4\x90\x80\x80", "\"\\ufffd\\ufffd\\ufffd\\ufffd\"");
    CHECK_ESCAPE("\xff", "\"\\ufffd\"");
    CHECK_ESCAPE("", "\"\"");
}
END_TEST

START_TEST(every_byte_pair_is_valid_json)
{
    /* Whatever two or three bytes a program puts in its argv, the output must stay JSON. */
    for (unsigned a = 0; a < 256; a++) {
        for (unsigned c = 0; c < 256; c += 5) {
            char in[3] = {(char)a, (char)c, (char)0xa9};
            char *got = escape(in, 3);
            ck_assert_msg(ht_json_valid(got), "bytes %02x %02x", a, c);
            free(got);
        }
    }
}
END_TEST

static struct hr_profile *parse_buf(struct ht_buf *b, const char *path)
{
    struct hr_profile *p = malloc(sizeof *p);
    char err[HR_ERR_MAX];
    ck_assert_msg(hr_profile_parse(p, path, ht_copy(b->data, b->len), b->len, err) == 0, "%s",
                  err);
    return p;
}

static char *to_json(struct hr_profile **v, size_t n, enum hr_sort_key key)
{
    FILE *f = tmpfile();
    struct hr_output_opts opts = {.sort = key};
    ck_assert_int_eq(hr_write_json(f, v, n, &opts), 0);
    char *out = ht_slurp(f);
    fclose(f);
    ck_assert_msg(ht_json_valid(out), "invalid JSON:\n%s", out);
    return out;
}

START_TEST(one_profile_object)
{
    struct ht_buf b = {0};
    ht_sample(&b);
    struct hr_profile *p = parse_buf(&b, "dir/\"odd\".hpf");
    char *out = to_json(&p, 1, HR_SORT_TOTAL_SIZE);
    ck_assert(out[0] == '{');
    ck_assert(strstr(out, "\"file\": \"dir/\\\"odd\\\".hpf\""));
    ck_assert(strstr(out, "\"command_line\": [\"./prog\", \"--flag\", \"x y\"]"));
    ck_assert(strstr(out, "\"executable\": \"/usr/bin/prog\""));
    ck_assert(strstr(out, "\"start_time_unix_ns\": 1000000000,"));
    ck_assert(strstr(out, "\"end_time_unix_ns\": 3000000000,"));
    ck_assert(strstr(out, "\"duration_ms\": 2000,"));
    ck_assert(strstr(out, "\"backend\": \"glibc\""));
    ck_assert(strstr(out, "\"allocator\": \"/lib/x86_64-linux-gnu/libc.so.6\""));
    ck_assert(strstr(out, "\"unwinder\": \"fp\""));
    ck_assert(strstr(out, "\"dump_reason\": \"exit\""));
    ck_assert(strstr(out, "\"forked_from\": 0"));
    ck_assert(strstr(out, "\"metadata_budget\": 1048576,"));
    ck_assert(strstr(out, "\"truncated_stacks\": 0,\n"));
    ck_assert(strstr(out, "\"killed_by\": 0,\n"));
    ck_assert(strstr(out, "\"metadata_resident\": 32768,\n"));
    ck_assert(strstr(out, "\"shadow_registry_bytes\": 0,\n"));
    ck_assert(strstr(out, "\"pool_unknown_frees\": 0,\n    \"pool_dropped\": 0,\n    \"headerless\": 0,\n    \"headerless_unseen_frees\": 0\n"));
    ck_assert(strstr(out, "\"pool\": false,\n"));
    /* context 2 (3096 bytes) before context 1 (1000 bytes) */
    char *c2 = strstr(out, "\"context_id\": 2,");
    char *c1 = strstr(out, "\"context_id\": 1,");
    ck_assert(c2 && c1 && c2 < c1);
    /* unknown addresses keep the raw return address and empty strings, once in the frame
     * table (before the contexts), which the contexts refer to by index */
    ck_assert(strstr(out, "{\n  \"schema_version\": 2,\n  \"file\": "));
    char *ftab = strstr(out, "\"frame_table\": [\n");
    ck_assert(ftab && ftab < c2);
    char *entry = strstr(ftab, "{\"address\": \"0x401000\", \"module\": \"\", \"function\": \"\", "
                               "\"file\": \"\", \"line\": 0, \"inlined\": false}");
    ck_assert(entry && entry < c2);
    ck_assert(!strstr(entry + 2, "\"address\": \"0x401000\""));
    /* context 2's stack (0x402000) came first, then context 1's two frames */
    ck_assert(strstr(c2, "\"frames\": [0]\n"));
    ck_assert(strstr(c1, "\"frames\": [1, 2]\n"));
    ck_assert(strstr(out, "\"merged_from\": null,\n  \"diff_base\": null,\n"));
    ck_assert(strstr(c1, "\"peak_live_size\": 400,"));
    ck_assert(strstr(c1, "\"last_alloc_ms\": 1900,"));
    free(out);
    hr_profile_free(p);
    free(p);
    free(b.data);
}
END_TEST

START_TEST(several_profiles_array)
{
    struct ht_buf b = {0};
    ht_sample(&b);
    struct hr_profile *v[3] = {parse_buf(&b, "a.hpf"), parse_buf(&b, "b.hpf"),
                               parse_buf(&b, "c.hpf")};
    char *out = to_json(v, 3, HR_SORT_TOTAL_SIZE);
    ck_assert(out[0] == '[');
    char *a = strstr(out, "\"file\": \"a.hpf\"");
    char *bb = strstr(out, "\"file\": \"b.hpf\"");
    char *c = strstr(out, "\"file\": \"c.hpf\"");
    ck_assert(a && bb && c && a < bb && bb < c);
    free(out);
    for (int i = 0; i < 3; i++) {
        hr_profile_free(v[i]);
        free(v[i]);
    }
    free(b.data);
}
END_TEST

START_TEST(sort_keys)
{
    /* Three contexts, each largest under a different key; ties go to the smaller id. */
    struct ht_buf b = {0};
    ht_file_header(&b);
    struct hpf_process pr = {0};
    ht_process(&b, &pr, "", "", NULL);
    struct hpf_summary s = {0};
    ht_record(&b, HPF_REC_SUMMARY, &s, sizeof s);
    struct hpf_hib h[3] = {
        {.context_id = 10, .alloc_count = 1, .total_size = 900, .total_lifetime_ms = 1},
        {.context_id = 20, .alloc_count = 50, .total_size = 100, .total_lifetime_ms = 2},
        {.context_id = 30, .alloc_count = 5, .total_size = 100, .total_lifetime_ms = 999},
    };
    struct hpf_live l[3] = {
        {.context_id = 10, .live_size = 1, .peak_live_size = 500, .max_live_size = 1},
        {.context_id = 20, .live_size = 2, .peak_live_size = 1, .max_live_size = 800},
        {.context_id = 30, .live_size = 700, .peak_live_size = 2, .max_live_size = 2},
    };
    for (int i = 0; i < 3; i++) {
        ht_record(&b, HPF_REC_HIB, &h[i], sizeof h[i]);
        ht_record(&b, HPF_REC_LIVE, &l[i], sizeof l[i]);
    }
    ht_end(&b);
    struct hr_profile *p = parse_buf(&b, "s.hpf");
    static const struct {
        const char *name;
        uint32_t first, second;
    } cases[] = {
        {"total_size", 10, 20},     {"alloc_count", 20, 30},   {"live_size", 30, 20},
        {"peak_live_size", 10, 30}, {"max_live_size", 20, 30}, {"total_lifetime_ms", 30, 20},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        enum hr_sort_key key;
        ck_assert_int_eq(hr_sort_key_parse(cases[i].name, &key), 0);
        ck_assert_str_eq(hr_sort_key_name(key), cases[i].name);
        struct hr_context **v = hr_contexts_sorted(p, key);
        ck_assert_msg(v[0]->context_id == cases[i].first && v[1]->context_id == cases[i].second,
                      "%s: got %u %u", cases[i].name, v[0]->context_id, v[1]->context_id);
        free(v);
    }
    enum hr_sort_key key;
    ck_assert_int_eq(hr_sort_key_parse("bogus", &key), -1);
    hr_profile_free(p);
    free(p);
    free(b.data);
}
END_TEST

START_TEST(byte_units)
{
    char buf[HR_BYTES_MAX];
    ck_assert_str_eq(hr_format_bytes(buf, 0), "0 B");
    ck_assert_str_eq(hr_format_bytes(buf, 1023), "1023 B");
    ck_assert_str_eq(hr_format_bytes(buf, 1024), "1.0 KiB");
    ck_assert_str_eq(hr_format_bytes(buf, 1536), "1.5 KiB");
    ck_assert_str_eq(hr_format_bytes(buf, 1048575), "1.0 MiB");
    ck_assert_str_eq(hr_format_bytes(buf, 3ull << 30), "3.0 GiB");
    ck_assert_str_eq(hr_format_bytes(buf, UINT64_MAX), "16.0 EiB");
}
END_TEST

int main(void)
{
    TCase *tc = ht_tcase("report_json", "json", 60);
    tcase_add_test(tc, escaping);
    tcase_add_test(tc, every_byte_pair_is_valid_json);
    tcase_add_test(tc, one_profile_object);
    tcase_add_test(tc, several_profiles_array);
    tcase_add_test(tc, sort_keys);
    tcase_add_test(tc, byte_units);
    return ht_run();
}
