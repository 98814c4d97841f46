/* Unit tests of the pprof output: the protobuf encoder's bytes, the interning tables, and
 * whole profiles written by hr_write_pprof, gunzipped and decoded again here (a decoder of
 * just the profile.proto fields heapprof writes), including a diff with negative values. */
#include <check.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "harness.h"
#include "hpf_writer.h"
#include "hr_cli.h"
#include "hr_intern.h"
#include "hr_output.h"
#include "hr_pb.h"
#include "hr_profile.h"

/* ---- a small protobuf reader ---- */
struct field {
    uint32_t num, wire;
    uint64_t v;          /* varint */
    const uint8_t *p;    /* length-delimited */
    size_t len;
};

static uint64_t get_varint(const uint8_t **p, const uint8_t *end)
{
    uint64_t v = 0;
    for (int shift = 0; *p < end && shift < 64; shift += 7) {
        uint8_t b = *(*p)++;
        v |= (uint64_t)(b & 0x7f) << shift;
        if (!(b & 0x80))
            return v;
    }
    ck_abort_msg("bad varint");
    return 0;
}

/* The next field of [*p, end), or 0 at the end. */
static int next_field(const uint8_t **p, const uint8_t *end, struct field *f)
{
    if (*p >= end)
        return 0;
    uint64_t tag = get_varint(p, end);
    f->num = (uint32_t)(tag >> 3);
    f->wire = tag & 7;
    if (f->wire == 0) {
        f->v = get_varint(p, end);
    } else {
        ck_assert_uint_eq(f->wire, 2);
        f->len = get_varint(p, end);
        ck_assert(f->len <= (size_t)(end - *p));
        f->p = *p;
        *p += f->len;
    }
    return 1;
}

#define MAXN 64
struct sample {
    uint64_t locs[MAXN];
    int64_t values[MAXN];
    size_t nlocs, nvalues;
    int64_t bytes_label, context_label;
};
struct location {
    uint64_t id, mapping, address, nlines;
};
struct mapping {
    uint64_t id, start, limit, offset, file, build_id, flags;
};
struct prof {
    uint8_t *raw;
    size_t rawlen;
    const char *str[256];
    size_t strlen_[256], nstr;
    uint64_t type[16], unit[16];
    size_t ntypes;
    struct sample samples[16];
    size_t nsamples;
    struct location locs[16];
    size_t nlocs;
    struct mapping maps[8];
    size_t nmaps;
    uint64_t default_type, comments[8], ncomments, nfuncs;
    int64_t time_nanos, duration_nanos;
};

static void packed(const struct field *f, uint64_t *out, size_t *n)
{
    const uint8_t *q = f->p, *e = f->p + f->len;
    while (q < e && *n < MAXN)
        out[(*n)++] = get_varint(&q, e);
}

static void decode_sample(struct prof *d, const struct field *sf)
{
    struct sample *s = &d->samples[d->nsamples++];
    memset(s, 0, sizeof *s);
    s->bytes_label = s->context_label = -1;
    const uint8_t *q = sf->p, *e = sf->p + sf->len;
    struct field f;
    while (next_field(&q, e, &f)) {
        if (f.num == 1)
            packed(&f, s->locs, &s->nlocs);
        else if (f.num == 2)
            packed(&f, (uint64_t *)s->values, &s->nvalues);
        else if (f.num == 3) {
            const uint8_t *lq = f.p, *le = f.p + f.len;
            struct field lf;
            uint64_t key = 0, num = 0;
            while (next_field(&lq, le, &lf)) {
                if (lf.num == 1)
                    key = lf.v;
                if (lf.num == 3)
                    num = lf.v;
            }
            /* label keys are resolved once the string table is read: keep the index */
            if (s->bytes_label == -1)
                s->bytes_label = (int64_t)(key << 32 | num);
            else
                s->context_label = (int64_t)(key << 32 | num);
        }
    }
}

static void decode(struct prof *d, FILE *f)
{
    memset(d, 0, sizeof *d);
    char *gz = NULL;
    fflush(f);
    long n = ftell(f);
    rewind(f);
    gz = malloc((size_t)n);
    ck_assert(fread(gz, 1, (size_t)n, f) == (size_t)n);
    ck_assert_msg((unsigned char)gz[0] == 0x1f && (unsigned char)gz[1] == 0x8b, "not gzip");
    size_t cap = 1 << 20;
    d->raw = malloc(cap);
    z_stream z = {0};
    ck_assert_int_eq(inflateInit2(&z, 15 + 16), Z_OK);
    z.next_in = (Bytef *)gz;
    z.avail_in = (uInt)n;
    z.next_out = d->raw;
    z.avail_out = (uInt)cap;
    ck_assert_int_eq(inflate(&z, Z_FINISH), Z_STREAM_END);
    d->rawlen = cap - z.avail_out;
    inflateEnd(&z);
    free(gz);
    const uint8_t *p = d->raw, *end = d->raw + d->rawlen;
    struct field fl;
    while (next_field(&p, end, &fl)) {
        const uint8_t *q = fl.p, *e = fl.p + fl.len;
        struct field g;
        switch (fl.num) {
        case 1:
            while (next_field(&q, e, &g))
                (g.num == 1 ? d->type : d->unit)[d->ntypes] = g.v;
            d->ntypes++;
            break;
        case 2: decode_sample(d, &fl); break;
        case 3: {
            struct mapping *m = &d->maps[d->nmaps++];
            while (next_field(&q, e, &g)) {
                uint64_t *v[] = {NULL, &m->id, &m->start, &m->limit, &m->offset, &m->file,
                                 &m->build_id};
                if (g.num <= 6)
                    *v[g.num] = g.v;
                else if (g.v)
                    m->flags |= 1u << g.num;
            }
            break;
        }
        case 4: {
            struct location *l = &d->locs[d->nlocs++];
            while (next_field(&q, e, &g)) {
                if (g.num == 1) l->id = g.v;
                if (g.num == 2) l->mapping = g.v;
                if (g.num == 3) l->address = g.v;
                if (g.num == 4) l->nlines++;
            }
            break;
        }
        case 5: d->nfuncs++; break;
        case 6:
            d->str[d->nstr] = (const char *)fl.p;
            d->strlen_[d->nstr++] = fl.len;
            break;
        case 9: d->time_nanos = (int64_t)fl.v; break;
        case 10: d->duration_nanos = (int64_t)fl.v; break;
        case 13: d->comments[d->ncomments++] = fl.v; break;
        case 14: d->default_type = fl.v; break;
        }
    }
}

static int str_is(const struct prof *d, uint64_t i, const char *s)
{
    return i < d->nstr && d->strlen_[i] == strlen(s) && memcmp(d->str[i], s, d->strlen_[i]) == 0;
}

static const struct sample *sample_of(const struct prof *d, uint32_t ctx)
{
    for (size_t i = 0; i < d->nsamples; i++)
        if ((d->samples[i].context_label & 0xffffffff) == ctx)
            return &d->samples[i];
    return NULL;
}

static struct hr_profile *parse_buf(struct ht_buf *b)
{
    struct hr_profile *p = calloc(1, sizeof *p);
    char err[HR_ERR_MAX];
    ck_assert_msg(hr_profile_parse(p, "t.hpf", ht_copy(b->data, b->len), b->len, err) == 0, "%s", err);
    return p;
}

static void write_pprof(struct prof *d, const struct hr_profile *p, enum hr_sort_key key)
{
    FILE *f = tmpfile();
    struct hr_output_opts opts = {.sort = key};
    ck_assert_int_eq(hr_write_pprof(f, p, &opts), 0);
    decode(d, f);
    fclose(f);
}

/* ---- tests ---- */

static char *hex(const struct hr_pb *b)
{
    static char s[256];
    s[0] = 0;
    for (size_t i = 0; i < b->len && i < 100; i++)
        sprintf(s + 2 * i, "%02x", b->buf[i]);
    return s;
}

START_TEST(encoder_bytes)
{
    struct hr_pb b = {0};
    hr_pb_varint(&b, 0);
    hr_pb_varint(&b, 1);
    hr_pb_varint(&b, 300);
    ck_assert_str_eq(hex(&b), "0001ac02");
    hr_pb_free(&b);
    hr_pb_uint(&b, 1, 0); /* proto3: zero is not written */
    hr_pb_int(&b, 2, -1); /* two's complement: ten bytes */
    ck_assert_str_eq(hex(&b), "10ffffffffffffffffff01");
    hr_pb_free(&b);
    hr_pb_bytes(&b, 6, "", 0);
    hr_pb_bytes(&b, 6, "ab", 2);
    ck_assert_str_eq(hex(&b), "32003202" "6162");
    hr_pb_free(&b);
    /* a nested message longer than 127 bytes: the body moves for a two-byte length */
    size_t m = hr_pb_begin(&b, 3);
    for (int i = 0; i < 200; i++)
        hr_pb_raw(&b, "x", 1);
    size_t inner = hr_pb_begin(&b, 1);
    hr_pb_uint(&b, 1, 5);
    hr_pb_end(&b, inner);
    hr_pb_end(&b, m);
    ck_assert_uint_eq(b.len, 3 + 200 + 4);
    ck_assert_uint_eq(b.buf[0], 0x1a);
    ck_assert_uint_eq(b.buf[1], 0x80 | (204 & 0x7f));
    ck_assert_uint_eq(b.buf[2], 204 >> 7);
    ck_assert_uint_eq(b.buf[3], 'x');
    ck_assert_uint_eq(b.buf[203], 0x0a);
    ck_assert_uint_eq(b.buf[204], 2);
    ck_assert_uint_eq(b.buf[205], 0x08);
    ck_assert_uint_eq(b.buf[206], 5);
    hr_pb_free(&b);
}
END_TEST

START_TEST(interning)
{
    struct hr_strtab t = {0};
    ck_assert_int_eq(hr_strtab_addz(&t, ""), 0);
    ck_assert_int_eq(hr_strtab_add(&t, "a\0b", 3), 1);
    ck_assert_int_eq(hr_strtab_add(&t, "a", 1), 2);
    ck_assert_int_eq(hr_strtab_add(&t, "a\0b", 3), 1);
    char s[32];
    for (int i = 0; i < 5000; i++) { /* several growths */
        snprintf(s, sizeof s, "s%d", i);
        ck_assert_int_eq(hr_strtab_addz(&t, s), 3 + i);
    }
    for (int i = 0; i < 5000; i += 7) {
        snprintf(s, sizeof s, "s%d", i);
        ck_assert_int_eq(hr_strtab_addz(&t, s), 3 + i);
    }
    ck_assert_uint_eq(t.n, 5003);
    hr_strtab_free(&t);
    struct hr_u64map m = {0};
    ck_assert_uint_eq(hr_u64map_get(&m, 7), 0);
    for (uint32_t i = 1; i <= 5000; i++)
        ck_assert_int_eq(hr_u64map_put(&m, (uint64_t)i << 12, i), 0);
    ck_assert_int_eq(hr_u64map_put(&m, 1 << 12, 99), 0);
    ck_assert_uint_eq(m.n, 5000);
    ck_assert_uint_eq(hr_u64map_get(&m, 1 << 12), 99);
    ck_assert_uint_eq(hr_u64map_get(&m, 4321ull << 12), 4321);
    ck_assert_uint_eq(hr_u64map_get(&m, 5001ull << 12), 0);
    hr_u64map_free(&m);
}
END_TEST

/* ht_sample's profile with a module holding the first stack's addresses. */
static void sample_with_module(struct ht_buf *b)
{
    ht_sample(b);
    b->len -= sizeof(struct hpf_record_header) + sizeof(struct hpf_end); /* drop END */
    b->records--;
    struct hpf_segment segs[] = {{.start = 0x400000, .end = 0x401000, .offset = 0, .prot = 1},
                                 {.start = 0x401000, .end = 0x402000, .offset = 0x1000, .prot = 5}};
    static const uint8_t id[] = {0xde, 0xad, 0xbe, 0xef};
    ht_module(b, 0, segs, 2, id, 4, "/nonexistent/prog");
    ht_end(b);
}

START_TEST(profile_fields)
{
    struct ht_buf b = {0};
    sample_with_module(&b);
    struct hr_profile *p = parse_buf(&b);
    struct prof d;
    write_pprof(&d, p, HR_SORT_TOTAL_SIZE);
    ck_assert(str_is(&d, 0, ""));
    static const char *const types[] = {"alloc_objects", "alloc_space", "inuse_objects",
                                        "inuse_space", "peak_objects", "peak_space",
                                        "accesses", "lifetime"};
    static const char *const units[] = {"count", "bytes", "count", "bytes", "count", "bytes",
                                        "count", "milliseconds"};
    ck_assert_uint_eq(d.ntypes, 8);
    for (int i = 0; i < 8; i++) {
        ck_assert_msg(str_is(&d, d.type[i], types[i]), "type %d", i);
        ck_assert(str_is(&d, d.unit[i], units[i]));
    }
    ck_assert(str_is(&d, d.default_type, "alloc_space"));
    ck_assert_int_eq(d.time_nanos, 3000000000ll);
    ck_assert_int_eq(d.duration_nanos, 2000000000ll);
    ck_assert_uint_eq(d.ncomments, 2);
    ck_assert(str_is(&d, d.comments[1], "./prog --flag x y"));
    /* samples: context 2 first (--sort total_size), each with its figures */
    ck_assert_uint_eq(d.nsamples, 2);
    const struct sample *s1 = sample_of(&d, 1), *s2 = sample_of(&d, 2);
    ck_assert(s1 && s2 && s2 == &d.samples[0]);
    static const int64_t v1[] = {10, 1000, 5, 500, 4, 400, 0, 50};
    static const int64_t v2[] = {20, 3096, 0, 0, 0, 0, 0, 10};
    ck_assert_uint_eq(s1->nvalues, 8);
    for (int i = 0; i < 8; i++) {
        ck_assert_int_eq(s1->values[i], v1[i]);
        ck_assert_int_eq(s2->values[i], v2[i]);
    }
    ck_assert(str_is(&d, (uint64_t)s1->bytes_label >> 32, "bytes"));
    ck_assert_int_eq(s1->bytes_label & 0xffffffff, 100);
    ck_assert_int_eq(s2->bytes_label & 0xffffffff, 3096 / 20);
    ck_assert(str_is(&d, (uint64_t)s1->context_label >> 32, "context"));
    /* locations: one per address, mapped to the module when inside it */
    ck_assert_uint_eq(d.nlocs, 3);
    ck_assert_uint_eq(s1->nlocs, 2);
    for (size_t i = 0; i < d.nlocs; i++) {
        const struct location *l = &d.locs[i];
        if (l->id == s1->locs[0])
            ck_assert_uint_eq(l->address, 0x401000);
        if (l->id == s1->locs[1])
            ck_assert_uint_eq(l->address, 0x401100);
        ck_assert_uint_eq(l->mapping, l->address < 0x402000 ? 1 : 0);
        ck_assert_uint_eq(l->nlines, 0); /* the binary is missing: no function, no line */
    }
    /* the mapping: the executable segment, build id in hex, symbolised flags */
    ck_assert_uint_eq(d.nmaps, 1);
    ck_assert_uint_eq(d.maps[0].start, 0x401000);
    ck_assert_uint_eq(d.maps[0].limit, 0x402000);
    ck_assert_uint_eq(d.maps[0].offset, 0x1000);
    ck_assert(str_is(&d, d.maps[0].file, "/nonexistent/prog"));
    ck_assert(str_is(&d, d.maps[0].build_id, "deadbeef"));
    ck_assert_uint_eq(d.maps[0].flags, 0xf << 7);
    free(d.raw);
    /* the default sample type follows --sort */
    write_pprof(&d, p, HR_SORT_ALLOC_COUNT);
    ck_assert(str_is(&d, d.default_type, "alloc_objects"));
    free(d.raw);
    write_pprof(&d, p, HR_SORT_LIVE_SIZE);
    ck_assert(str_is(&d, d.default_type, "inuse_space"));
    free(d.raw);
    hr_profile_free(p);
    free(p);
    free(b.data);
}
END_TEST

/* A diff profile (as --diff builds it): values are new minus base, negative ones included,
 * and contexts that did not change have no sample. */
START_TEST(diff_values)
{
    struct ht_buf b = {0};
    ht_sample(&b);
    struct hr_profile *p = parse_buf(&b), *base = parse_buf(&b);
    p->diff_base = base;
    for (size_t i = 0; i < p->ncontexts; i++)
        p->contexts[i].base = hr_context_find(base, p->contexts[i].context_id);
    struct hr_context *c1 = hr_context_find(p, 1);
    c1->live.allocs = 7;
    c1->live.bytes = 700;
    c1->live.live_size = 900;
    struct prof d;
    write_pprof(&d, p, HR_SORT_TOTAL_SIZE);
    ck_assert_uint_eq(d.nsamples, 1);
    const struct sample *s = sample_of(&d, 1);
    ck_assert(s);
    ck_assert_int_eq(s->values[0], -3);
    ck_assert_int_eq(s->values[1], -300);
    ck_assert_int_eq(s->values[3], 400);
    ck_assert_int_eq(s->values[7], 0);
    ck_assert_int_eq(s->bytes_label & 0xffffffff, 100); /* the new blocks' size */
    free(d.raw);
    hr_profile_free(p);
    hr_profile_free(base);
    free(p);
    free(base);
    free(b.data);
}
END_TEST

/* A profile without contexts is still a whole Profile: the types, no sample. */
START_TEST(no_contexts)
{
    struct ht_buf b = {0};
    struct hpf_process pr = {.pid = 3, .argc = 0};
    ht_file_header(&b);
    ht_process(&b, &pr, "glibc", "/bin/x", NULL);
    struct hpf_summary sum = {0};
    ht_record(&b, HPF_REC_SUMMARY, &sum, sizeof sum);
    ht_end(&b);
    struct hr_profile *p = parse_buf(&b);
    struct prof d;
    write_pprof(&d, p, HR_SORT_TOTAL_SIZE);
    ck_assert_uint_eq(d.ntypes, 8);
    ck_assert_uint_eq(d.nsamples, 0);
    ck_assert_uint_eq(d.nlocs, 0);
    ck_assert_uint_eq(d.nmaps, 0);
    ck_assert(str_is(&d, d.default_type, "alloc_space"));
    free(d.raw);
    hr_profile_free(p);
    free(p);
    free(b.data);
}
END_TEST

START_TEST(cli_one_profile)
{
    char *path = ht_sample_file();
    char *out = ht_tmpfile("", 0);
    char *argv[] = {"heapprof-report", "--format", "pprof", "-o", out, path, NULL};
    ck_assert_int_eq(ht_cli(6, argv, NULL, NULL), HR_EXIT_OK);
    FILE *f = fopen(out, "rb");
    struct prof d;
    fseek(f, 0, SEEK_END);
    decode(&d, f);
    ck_assert_uint_eq(d.nsamples, 2);
    free(d.raw);
    fclose(f);
    /* several profiles are merged into one: here two copies of one process's dump, of which
     * only one counts, so the samples are the same two */
    char *argv2[] = {"heapprof-report", "--format", "pprof", "-o", out, path, path, NULL};
    ck_assert_int_eq(ht_cli(7, argv2, NULL, NULL), HR_EXIT_OK);
    f = fopen(out, "rb");
    fseek(f, 0, SEEK_END);
    decode(&d, f);
    ck_assert_uint_eq(d.nsamples, 2);
    free(d.raw);
    fclose(f);
    unlink(out);
    unlink(path);
    free(out);
    free(path);
}
END_TEST

int main(void)
{
    TCase *tc = ht_tcase("report_pprof", "pprof", 60);
    tcase_add_test(tc, encoder_bytes);
    tcase_add_test(tc, interning);
    tcase_add_test(tc, profile_fields);
    tcase_add_test(tc, diff_values);
    tcase_add_test(tc, no_contexts);
    tcase_add_test(tc, cli_one_profile);
    return ht_run();
}
