/* Unit tests of the access-profiling data in the report: ACCESS and ACCESS_HIST records and the
 * HIB write counts as parsed and merged (fixed and packed, old and new layouts), the records a
 * reader rejects, the JSON fields, the text lines (histogram strip included) and the cold and
 * hottest-per-byte views, all on synthetic profiles written with hpf_writer.h. */
#include <check.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"
#include "hpf_writer.h"
#include "hr_output.h"
#include "hr_profile.h"
#include "json_check.h"

#define APP_LO 0x400000ull
#define LIB_LO 0x7f0000000000ull

static void header(struct ht_buf *b)
{
    static const char *const argv[] = {"./app"};
    struct hpf_process pr = {.pid = 77, .dump_ms = 30000, .dump_reason = HPF_DUMP_EXIT,
                             .unwinder = HPF_UNWIND_FP, .stack_depth = 64, .argc = 1};
    ht_file_header(b);
    ht_process(b, &pr, "glibc", "/usr/bin/app", argv);
    struct hpf_summary s = {.total_allocs = 8, .contexts = 4, .shadow_resident = 3 << 20,
                            .shadow_registry_bytes = 8192};
    ht_record(b, HPF_REC_SUMMARY, &s, sizeof s);
    struct hpf_segment app = {.start = APP_LO, .end = APP_LO + 0x100000, .prot = 5};
    struct hpf_segment lib = {.start = LIB_LO, .end = LIB_LO + 0x100000, .prot = 5};
    ht_module(b, 0, &app, 1, NULL, 0, "/usr/bin/app");
    ht_module(b, LIB_LO, &lib, 1, NULL, 0, "/usr/lib/libx.so");
}

/* Four contexts with access data (see each one's comment), the ACCESS record of a callbacks
 * executable, a gcc library and an address in no module. */
static void access_sample(struct ht_buf *b)
{
    header(b);
    struct hpf_access_module mods[] = {
        {.addr = APP_LO + 0x1234, .mode = HPF_ACCESS_CALLBACKS},
        {.addr = LIB_LO + 0x100, .mode = HPF_ACCESS_GCC},
        {.addr = 0x900000, .mode = HPF_ACCESS_GCC},
    };
    struct hpf_access_words words = {.word = 8, .max_size = 256, .counter_max = 255};
    ht_access_words(b, HPF_ACCESS_CALLBACKS | HPF_ACCESS_GCC, 32, mods, 3, &words);
    /* 1: hot, 4 blocks of 256 bytes, 10 ms each; two records, the second packed. */
    struct hpf_hib h1a = {.context_id = 1, .alloc_count = 3, .total_size = 768, .min_size = 256,
                          .max_size = 256, .total_lifetime_ms = 30, .min_lifetime_ms = 10,
                          .max_lifetime_ms = 10, .total_access_count = 960,
                          .min_access_count = 310, .max_access_count = 330,
                          .total_percent_utilized = 300, .min_percent_utilized = 100,
                          .max_percent_utilized = 100, .dealloc_timestamp_ms = 5,
                          .total_write_count = 900, .min_write_count = 290,
                          .max_write_count = 310};
    struct hpf_hib h1b = {.context_id = 1, .alloc_count = 1, .total_size = 256, .min_size = 256,
                          .max_size = 256, .total_lifetime_ms = 10, .min_lifetime_ms = 10,
                          .max_lifetime_ms = 10, .total_access_count = 320,
                          .min_access_count = 320, .max_access_count = 320,
                          .total_percent_utilized = 100, .min_percent_utilized = 100,
                          .max_percent_utilized = 100, .dealloc_timestamp_ms = 9,
                          .total_write_count = 300, .min_write_count = 300,
                          .max_write_count = 300};
    ht_record(b, HPF_REC_HIB, &h1a, sizeof h1a);
    ht_packed(b, HPF_REC_HIB, &h1b, 1, HPF_HIB_NFIELDS);
    /* 2: cold, 2 blocks of 1 MiB held 10 s each, 10 accesses. */
    struct hpf_hib h2 = {.context_id = 2, .alloc_count = 2, .total_size = 2 << 20,
                         .min_size = 1 << 20, .max_size = 1 << 20, .total_lifetime_ms = 20000,
                         .min_lifetime_ms = 10000, .max_lifetime_ms = 10000,
                         .total_access_count = 10, .min_access_count = 4, .max_access_count = 6,
                         .total_percent_utilized = 2, .min_percent_utilized = 1,
                         .max_percent_utilized = 1, .total_write_count = 4,
                         .min_write_count = 2, .max_write_count = 2};
    /* 3: untouched, lived under a tick. 4: 512 bytes for 5 s, 5000 accesses. */
    struct hpf_hib h3 = {.context_id = 3, .alloc_count = 1, .total_size = 100, .min_size = 100,
                         .max_size = 100};
    struct hpf_hib h4 = {.context_id = 4, .alloc_count = 1, .total_size = 512, .min_size = 512,
                         .max_size = 512, .total_lifetime_ms = 5000, .min_lifetime_ms = 5000,
                         .max_lifetime_ms = 5000, .total_access_count = 5000,
                         .min_access_count = 5000, .max_access_count = 5000,
                         .total_percent_utilized = 50, .min_percent_utilized = 50,
                         .max_percent_utilized = 50, .total_write_count = 5000,
                         .min_write_count = 5000, .max_write_count = 5000};
    ht_record(b, HPF_REC_HIB, &h2, sizeof h2);
    ht_record(b, HPF_REC_HIB, &h3, sizeof h3);
    ht_record(b, HPF_REC_HIB, &h4, sizeof h4);
    uint64_t pcs1[] = {APP_LO + 0x10};
    uint64_t pcs2[] = {LIB_LO + 0x20, APP_LO + 0x30, APP_LO + 0x40, APP_LO + 0x50};
    ht_stack(b, 1, pcs1, 1);
    ht_stack(b, 2, pcs2, 4);
    /* Context 1's histogram in two records of different lengths, its per-word histogram in
     * two (one word saturated in one block), and one of a kind the reader does not know. */
    uint64_t a[] = {100, 200, 300}, c[] = {1, 2, 3, 4, 5}, w[] = {9, 9}, w2[] = {0, 1},
             sat[] = {0, 1}, odd[] = {77};
    ht_access_hist(b, 1, HPF_HIST_GRANULE, a, 3);
    ht_access_hist(b, 1, HPF_HIST_WORD, w, 2);
    ht_access_hist(b, 1, HPF_HIST_WORD_SATURATED, sat, 2);
    ht_access_hist(b, 1, 99, odd, 1);
    ht_access_hist(b, 1, HPF_HIST_GRANULE, c, 5);
    ht_access_hist(b, 1, HPF_HIST_WORD, w2, 2);
    ht_end(b);
}

static struct hr_profile *parse_ok(struct ht_buf *b)
{
    struct hr_profile *p = malloc(sizeof *p);
    char err[HR_ERR_MAX];
    ck_assert_msg(hr_profile_parse(p, "a.hpf", ht_copy(b->data, b->len), b->len, err) == 0, "%s",
                  err);
    return p;
}

static void drop(struct hr_profile *p, struct ht_buf *b)
{
    hr_profile_free(p);
    free(p);
    free(b->data);
}

static void expect_error(struct ht_buf *b, const char *want)
{
    struct hr_profile p;
    char err[HR_ERR_MAX];
    ck_assert_int_eq(hr_profile_parse(&p, "x.hpf", ht_copy(b->data, b->len), b->len, err), -1);
    ck_assert_msg(strstr(err, want), "error '%s' does not mention '%s'", err, want);
    hr_profile_free(&p);
}

START_TEST(parse_access_records)
{
    struct ht_buf b = {0};
    access_sample(&b);
    struct hr_profile *p = parse_ok(&b);
    ck_assert(p->access.present);
    ck_assert_uint_eq(p->access.rec.modes, HPF_ACCESS_CALLBACKS | HPF_ACCESS_GCC);
    ck_assert_uint_eq(p->access.rec.hist_bins, 32);
    ck_assert_uint_eq(p->access.rec.nmodules, 3);
    ck_assert_uint_eq(p->access.modules[0].path.len, strlen("/usr/bin/app"));
    ck_assert(memcmp(p->access.modules[1].path.ptr, "/usr/lib/libx.so", 16) == 0);
    ck_assert_ptr_null(p->access.modules[2].path.ptr);
    ck_assert_uint_eq(p->access.modules[1].mode, HPF_ACCESS_GCC);
    ck_assert(hr_access_rw_apart(p));
    ck_assert_uint_eq(p->unknown_records, 0);

    /* HIB records merged, write counts included. */
    const struct hpf_hib *h = &hr_context_find(p, 1)->hib;
    ck_assert_uint_eq(h->alloc_count, 4);
    ck_assert_uint_eq(h->total_access_count, 1280);
    ck_assert_uint_eq(h->min_access_count, 310);
    ck_assert_uint_eq(h->max_access_count, 330);
    ck_assert_uint_eq(h->total_write_count, 1200);
    ck_assert_uint_eq(h->min_write_count, 290);
    ck_assert_uint_eq(h->max_write_count, 310);
    ck_assert_uint_eq(hr_access_reads(h), 80);

    /* Histograms summed bin by bin to the longer length, per kind; an unknown kind left out. */
    const struct hr_context *c1 = hr_context_find(p, 1);
    ck_assert_uint_eq(c1->hist_bins, 5);
    uint64_t want[] = {101, 202, 303, 4, 5};
    for (int i = 0; i < 5; i++)
        ck_assert_uint_eq(c1->hist[i], want[i]);
    ck_assert_uint_eq(hr_context_find(p, 2)->hist_bins, 0);
    ck_assert_uint_eq(c1->word_bins, 2);
    ck_assert_uint_eq(c1->word_hist[0], 9);
    ck_assert_uint_eq(c1->word_hist[1], 10);
    ck_assert_uint_eq(c1->word_sat_bins, 2);
    ck_assert_uint_eq(c1->word_sat[0], 0);
    ck_assert_uint_eq(c1->word_sat[1], 1);
    ck_assert_uint_eq(hr_context_find(p, 2)->word_bins, 0);
    /* The per-word parameters after the modules. */
    ck_assert_uint_eq(p->access.words.word, 8);
    ck_assert_uint_eq(p->access.words.max_size, 256);
    ck_assert_uint_eq(p->access.words.counter_max, 255);
    drop(p, &b);
}
END_TEST

START_TEST(hib_layouts)
{
    /* The first HIB layout (144 bytes, fixed and packed with 23 fields) reads with 0 writes;
     * a packed entry with more fields than the reader knows keeps the ones it knows. */
    struct ht_buf b = {0};
    header(&b);
    struct hpf_hib h = {.context_id = 1, .alloc_count = 2, .total_access_count = 50,
                        .min_access_count = 20, .max_access_count = 30,
                        .total_write_count = 7, .min_write_count = 3, .max_write_count = 4};
    ht_record(&b, HPF_REC_HIB, &h, HPF_HIB_MIN_SIZE);
    h.context_id = 2;
    ht_packed(&b, HPF_REC_HIB, &h, 1, 23); /* the fields of the first layout */
    h.context_id = 3;
    ht_packed(&b, HPF_REC_HIB, &h, 1, HPF_HIB_NFIELDS + 3);
    h.context_id = 4;
    ht_record(&b, HPF_REC_HIB, &h, sizeof h);
    ht_end(&b);
    struct hr_profile *p = parse_ok(&b);
    for (uint32_t id = 1; id <= 4; id++) {
        const struct hpf_hib *g = &hr_context_find(p, id)->hib;
        ck_assert_uint_eq(g->total_access_count, 50);
        ck_assert_uint_eq(g->total_write_count, id <= 2 ? 0 : 7);
        ck_assert_uint_eq(g->max_write_count, id <= 2 ? 0 : 4);
        ck_assert_uint_eq(hr_access_reads(g), id <= 2 ? 50 : 43);
    }
    ck_assert(!p->access.present);
    ck_assert(!hr_access_rw_apart(p));
    drop(p, &b);

    /* An ACCESS record of the first layout (no per-word parameters): no word plane. */
    b = (struct ht_buf){0};
    header(&b);
    struct hpf_access_module m = {.addr = APP_LO, .mode = HPF_ACCESS_CALLBACKS};
    ht_access(&b, HPF_ACCESS_CALLBACKS, 64, 32, &m, 1);
    ht_end(&b);
    p = parse_ok(&b);
    ck_assert(p->access.present);
    ck_assert_uint_eq(p->access.words.word, 0);
    ck_assert_uint_eq(p->access.words.counter_max, 0);
    drop(p, &b);

    /* 143 bytes: shorter than any layout. */
    b = (struct ht_buf){0};
    header(&b);
    ht_record(&b, HPF_REC_HIB, &h, HPF_HIB_MIN_SIZE - 1);
    ht_end(&b);
    expect_error(&b, "HIB record at offset");
    free(b.data);
}
END_TEST

START_TEST(bad_access_records)
{
    struct ht_buf b = {0};
    struct hpf_access_module m = {.addr = APP_LO};
    uint64_t bins[3] = {1, 2, 3};

    header(&b);
    ht_access(&b, HPF_ACCESS_INLINE, 64, 32, &m, 1);
    ht_access(&b, HPF_ACCESS_INLINE, 64, 32, &m, 1);
    ht_end(&b);
    expect_error(&b, "second ACCESS record");

    b.len = b.records = 0;
    header(&b);
    ht_access(&b, HPF_ACCESS_INLINE, 64, 32, &m, 1);
    /* claims 5 modules, holds 1 */
    memcpy(b.data + b.len - 16 - sizeof(struct hpf_access) + 12, &(uint32_t){5}, 4);
    ht_end(&b);
    expect_error(&b, "5 modules do not fit");

    b.len = b.records = 0;
    header(&b);
    ht_record(&b, HPF_REC_ACCESS, &m, 8);
    ht_end(&b);
    expect_error(&b, "ACCESS record at offset");

    b.len = b.records = 0;
    header(&b);
    ht_access_hist(&b, 1, HPF_HIST_GRANULE, bins, 3);
    memcpy(b.data + b.len - 24 - sizeof(struct hpf_access_hist) + 8, &(uint32_t){4}, 4);
    ht_end(&b);
    expect_error(&b, "4 bins do not match record size");

    b.len = b.records = 0;
    header(&b);
    ht_access_hist(&b, 0, HPF_HIST_GRANULE, bins, 3);
    ht_end(&b);
    expect_error(&b, "ACCESS_HIST record at offset");

    b.len = b.records = 0;
    header(&b);
    ht_record(&b, HPF_REC_ACCESS_HIST, bins, 12);
    ht_end(&b);
    expect_error(&b, "too short");
    free(b.data);
}
END_TEST

START_TEST(derived_figures)
{
    struct hpf_hib h = {.alloc_count = 4, .total_size = 1024, .total_lifetime_ms = 40,
                        .total_access_count = 1280, .total_write_count = 1300};
    ck_assert_double_eq(hr_access_density(&h), 1.25);
    ck_assert_double_eq_tol(hr_access_density_per_s(&h), 125.0, 1e-9);
    ck_assert_double_eq_tol(hr_access_byte_seconds(&h), 10.24, 1e-9);
    ck_assert_uint_eq(hr_access_reads(&h), 0); /* more writes than accesses: damaged, 0 */
    h.total_lifetime_ms = 0;
    ck_assert_double_eq(hr_access_density_per_s(&h), -1.0);
    ck_assert_double_eq(hr_access_byte_seconds(&h), 0.0);
    struct hpf_hib z = {0};
    ck_assert_double_eq(hr_access_density(&z), 0.0);
    ck_assert_double_eq(hr_access_density_per_s(&z), -1.0);
    const char *names[3];
    ck_assert_uint_eq(hr_access_mode_names(HPF_ACCESS_INLINE | HPF_ACCESS_GCC | 0x100, names), 2);
    ck_assert_str_eq(names[0], "inline");
    ck_assert_str_eq(names[1], "gcc");
}
END_TEST

START_TEST(cold_and_hottest)
{
    struct ht_buf b = {0};
    access_sample(&b);
    struct hr_profile *p = parse_ok(&b);
    struct hr_context **v = malloc(p->ncontexts * sizeof *v);
    /* Byte-seconds: 1: 10.24, 2: 20971520, 3: 0, 4: 2560. Profile rate 6290 / 20974090;
     * only context 2 (10 / 20971520) is under a tenth of it. */
    ck_assert_uint_eq(hr_access_cold(p, v), 1);
    ck_assert_uint_eq(v[0]->context_id, 2);
    /* Accesses per byte: 4: 9.77, 1: 1.25, 2: 4.8e-6; 3 has none. */
    ck_assert_uint_eq(hr_access_hottest(p, v), 3);
    ck_assert_uint_eq(v[0]->context_id, 4);
    ck_assert_uint_eq(v[1]->context_id, 1);
    ck_assert_uint_eq(v[2]->context_id, 2);
    /* Sort keys of the access figures. */
    enum hr_sort_key key;
    ck_assert_int_eq(hr_sort_key_parse("access_density", &key), 0);
    struct hr_context **o = hr_contexts_sorted(p, key);
    ck_assert_uint_eq(o[0]->context_id, 4);
    ck_assert_uint_eq(o[1]->context_id, 1);
    free(o);
    ck_assert_int_eq(hr_sort_key_parse("total_access_count", &key), 0);
    o = hr_contexts_sorted(p, key);
    ck_assert_uint_eq(o[0]->context_id, 4);
    ck_assert_uint_eq(o[1]->context_id, 1);
    ck_assert_uint_eq(o[2]->context_id, 2);
    free(o);
    free(v);
    drop(p, &b);

    /* A profile without access data has neither view. */
    b = (struct ht_buf){0};
    ht_sample(&b);
    p = parse_ok(&b);
    v = malloc(p->ncontexts * sizeof *v);
    ck_assert_uint_eq(hr_access_cold(p, v), 0);
    ck_assert_uint_eq(hr_access_hottest(p, v), 0);
    free(v);
    drop(p, &b);
}
END_TEST

static char *render(struct hr_profile *p, int json)
{
    FILE *f = tmpfile();
    struct hr_output_opts opts = {.sort = HR_SORT_TOTAL_SIZE, .top = 20};
    ck_assert_int_eq(json ? hr_write_json(f, &p, 1, &opts) : hr_write_text(f, &p, 1, &opts), 0);
    char *out = ht_slurp(f);
    fclose(f);
    if (json)
        ck_assert_msg(ht_json_valid(out), "invalid JSON:\n%s", out);
    return out;
}

START_TEST(json_fields)
{
    struct ht_buf b = {0};
    access_sample(&b);
    struct hr_profile *p = parse_ok(&b);
    char *out = render(p, 1);
    ck_assert(strstr(out, "\"shadow_resident\": 3145728,\n    \"shadow_registry_bytes\": 8192,\n"));
    ck_assert_msg(strstr(out, "  \"access\": {\n    \"modes\": [\"callbacks\", \"gcc\"],\n"
                              "    \"reads_writes_apart\": true,\n    \"abi_unknown\": false,\n"
                              "    \"granule\": 64,\n    \"histogram_granules\": 32,\n"
                              "    \"word_histograms\": {\"word\": 8, \"max_size\": 256, "
                              "\"counter_max\": 255, \"complete\": true},\n"
                              "    \"instrumented_modules\": [\"/usr/bin/app\", "
                              "\"/usr/lib/libx.so\", \"0x900000\"]\n  },\n  \"merged_from\": null,"),
                  "%s", out);
    char *c1 = strstr(out, "\"context_id\": 1,");
    char *c3 = strstr(out, "\"context_id\": 3,");
    ck_assert(c1 && c3);
    ck_assert(strstr(c1, "\"max_percent_utilized\": 100,\n      \"total_write_count\": 1200,\n"
                         "      \"min_write_count\": 290,\n      \"max_write_count\": 310,\n"
                         "      \"total_read_count\": 80,\n      \"access_density\": 1.25,\n"
                         "      \"access_density_per_s\": 125,\n"
                         "      \"access_histogram\": {\"granule\": 64, \"counts\": "
                         "[101, 202, 303, 4, 5]},\n"
                         "      \"access_word_histogram\": {\"word\": 8, \"counts\": [9, 10], "
                         "\"saturated_blocks\": [0, 1]},\n      \"alloc_timestamp_ms\""));
    ck_assert(strstr(c3, "\"access_density\": 0,\n      \"access_density_per_s\": null,\n"
                         "      \"access_histogram\": null,\n      \"access_word_histogram\": null,\n"));
    free(out);
    drop(p, &b);

    /* Without access data: "access" is null, the fields are there with zeros. */
    b = (struct ht_buf){0};
    ht_sample(&b);
    p = parse_ok(&b);
    out = render(p, 1);
    ck_assert(strstr(out, "  \"access\": null,\n  \"merged_from\": null,"));
    ck_assert(strstr(out, "\"total_write_count\": 0,"));
    ck_assert(strstr(out, "\"access_density\": 0,"));
    free(out);
    drop(p, &b);

    /* An inline module next to a callbacks one: reads and writes are not apart; an unknown
     * MemProf ABI is said. */
    b = (struct ht_buf){0};
    header(&b);
    struct hpf_access_module m = {.addr = APP_LO, .mode = HPF_ACCESS_INLINE};
    struct hpf_access_words words = {.word = 8, .max_size = 128, .counter_max = 255};
    ht_access_words(&b, HPF_ACCESS_INLINE | HPF_ACCESS_CALLBACKS | HPF_ACCESS_ABI_UNKNOWN, 8, &m,
                    1, &words);
    ht_end(&b);
    p = parse_ok(&b);
    out = render(p, 1);
    ck_assert(strstr(out, "\"modes\": [\"inline\", \"callbacks\"],\n"
                          "    \"reads_writes_apart\": false,\n    \"abi_unknown\": true,"));
    /* Per-word histograms without the inline module's accesses: not complete. */
    ck_assert(strstr(out, "\"word_histograms\": {\"word\": 8, \"max_size\": 128, "
                          "\"counter_max\": 255, \"complete\": false},\n"));
    free(out);
    out = render(p, 0);
    ck_assert(strstr(out, "  access       clang inline counters + clang callbacks, reads and "
                          "writes together, COUNTS UNRELIABLE"));
    ck_assert(strstr(out, "  words        per-8-byte-word histograms of blocks up to 128 B, "
                          "counters saturating at 255 accesses a block (without the inline "
                          "modules' accesses)\n"));
    free(out);
    drop(p, &b);
}
END_TEST

START_TEST(text_lines)
{
    struct ht_buf b = {0};
    access_sample(&b);
    struct hr_profile *p = parse_ok(&b);
    char *out = render(p, 0);
    ck_assert_msg(strstr(out, "  access       clang callbacks + gcc callbacks, reads and writes "
                              "apart; histograms up to 32 granules of 64 B\n"
                              "  words        per-8-byte-word histograms of blocks up to 256 B, "
                              "counters saturating at 255 accesses a block\n"
                              "  instrumented /usr/bin/app\n"
                              "               /usr/lib/libx.so\n"
                              "               0x900000 (in no module of the profile)\n"),
                  "%s", out);
    ck_assert(strstr(out, "  accesses     6290 (86 reads, 6204 writes) to heap blocks\n"
                          "  shadow       3.0 MiB in memory, live-block registry 8.0 KiB\n"));
    char *c1 = strstr(out, "context 1:");
    ck_assert(c1);
    ck_assert_msg(strstr(c1, "    accesses   total 1280, per block min 310, avg 320.0, max 330\n"
                             "    reads      total 80; writes total 1200, per block min 290, max 310\n"
                             "    utilised   min 100%, avg 100.0%, max 100% of the 64-byte granules\n"
                             "    density    1.25 accesses per byte, 125 per byte per second of lifetime\n"
                             "    histogram  |=#@::| 5 granules of 64 B, most 303 (granule 2), 0 untouched\n"
                             "    words      |@@| 2 words of 8 B, most 10 (word 1, bytes 8-15), 0 untouched, "
                             "1 saturated in some block (lower bounds)\n"
                             "    per word   9 10+\n"),
                  "%s", c1);
    char *c3 = strstr(out, "context 3:");
    ck_assert(strstr(c3, "    density    0 accesses per byte, per byte per second unknown"));
    char *cold = strstr(out, "cold allocations:");
    ck_assert(cold);
    ck_assert_msg(strstr(cold, "  #1  context 2: 2 blocks of 1.0 MiB avg held 10.0 s avg (20.0 MiB-s), "
                               "10 accesses (4.77e-07 per byte per second), utilised 1%\n"
                               "       0x7f0000000020 < 0x400030 < 0x400040\n\nhottest per byte"),
                  "%s", cold);
    char *hot = strstr(out, "hottest per byte:");
    ck_assert(strstr(hot, "  #1  context 4: 9.77 accesses per byte, 5000 accesses to 512 B in 1 "
                          "block, utilised 50%\n       (no stack)\n"
                          "  #2  context 1: 1.25 accesses per byte"));
    free(out);
    drop(p, &b);

    /* Without access data the text report has none of these lines. */
    b = (struct ht_buf){0};
    ht_sample(&b);
    p = parse_ok(&b);
    out = render(p, 0);
    ck_assert(!strstr(out, "access"));
    ck_assert(!strstr(out, "histogram"));
    ck_assert(!strstr(out, "cold"));
    free(out);
    drop(p, &b);
}
END_TEST

START_TEST(wide_histogram_strip)
{
    /* 130 bins fold into columns of 3 (44 columns); only bin 129 is touched, in column 43. */
    struct ht_buf b = {0};
    header(&b);
    struct hpf_access_module m = {.addr = APP_LO, .mode = HPF_ACCESS_INLINE};
    ht_access(&b, HPF_ACCESS_INLINE, 64, 200, &m, 1);
    struct hpf_hib h = {.context_id = 9, .alloc_count = 1, .total_size = 130 * 64,
                        .total_access_count = 7, .min_access_count = 7, .max_access_count = 7};
    ht_record(&b, HPF_REC_HIB, &h, sizeof h);
    uint64_t bins[130] = {0};
    bins[129] = 7;
    ht_access_hist(&b, 9, HPF_HIST_GRANULE, bins, 130);
    ht_end(&b);
    struct hr_profile *p = parse_ok(&b);
    char *out = render(p, 0);
    char want[256];
    snprintf(want, sizeof want, "    histogram  |%.*s@| (3 granules a column) 130 granules of 64 B, "
             "most 7 (granule 129), 129 untouched\n", 43,
             "..............................................");
    ck_assert_msg(strstr(out, want), "%s", out);
    /* Inline only: no reads line, no per-word histograms. */
    ck_assert(!strstr(out, "    reads "));
    ck_assert(strstr(out, "  words        no per-word histograms (only callback builds count per "
                          "word: heapprof-cc --callbacks, or gcc)\n"));
    ck_assert(!strstr(out, "    words "));
    free(out);
    drop(p, &b);
}
END_TEST

int main(void)
{
    TCase *tc = ht_tcase("report_access", "access", 60);
    tcase_add_test(tc, parse_access_records);
    tcase_add_test(tc, hib_layouts);
    tcase_add_test(tc, bad_access_records);
    tcase_add_test(tc, derived_figures);
    tcase_add_test(tc, cold_and_hottest);
    tcase_add_test(tc, json_fields);
    tcase_add_test(tc, text_lines);
    tcase_add_test(tc, wide_histogram_strip);
    return ht_run();
}
