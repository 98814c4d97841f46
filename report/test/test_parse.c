/* Unit tests of the profile reader: a well-formed profile gives the expected model, records
 * may come in any order, unknown records are skipped, and each kind of damage is rejected
 * with its own message. */
#include <check.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"
#include "hpf_writer.h"
#include "hr_profile.h"

/* Parses b; returns the parse status and leaves the message in err. */
static int parse(struct ht_buf *b, struct hr_profile *p, char *err)
{
    err[0] = 0;
    return hr_profile_parse(p, "mem.hpf", ht_copy(b->data, b->len), b->len, err);
}

/* Expects b to be rejected with a message containing want. */
static void expect_error(struct ht_buf *b, const char *want)
{
    struct hr_profile p;
    char err[HR_ERR_MAX];
    ck_assert_int_eq(parse(b, &p, err), -1);
    ck_assert_msg(strstr(err, want), "error '%s' does not mention '%s'", err, want);
    hr_profile_free(&p);
}

START_TEST(sample_parses)
{
    struct ht_buf b = {0};
    ht_sample(&b);
    struct hr_profile p;
    char err[HR_ERR_MAX];
    ck_assert_msg(parse(&b, &p, err) == 0, "%s", err);
    ck_assert_uint_eq(p.process.pid, 1234);
    ck_assert_uint_eq(p.process.argc, 3);
    ck_assert_int_eq(p.argv[2].len, 3);
    ck_assert(memcmp(p.argv[2].ptr, "x y", 3) == 0);
    ck_assert(p.backend.len == 5 && memcmp(p.backend.ptr, "glibc", 5) == 0);
    ck_assert(p.executable.len == 13 && memcmp(p.executable.ptr, "/usr/bin/prog", 13) == 0);
    ck_assert(p.allocator.len == 31 &&
              memcmp(p.allocator.ptr, "/lib/x86_64-linux-gnu/libc.so.6", 31) == 0);
    ck_assert_uint_eq(p.summary.total_allocs, 30);
    ck_assert_uint_eq(p.ncontexts, 2);
    struct hr_context *c = hr_context_find(&p, 1);
    ck_assert_ptr_nonnull(c);
    ck_assert(c->has_hib && c->has_live && c->has_stack);
    ck_assert_uint_eq(c->depth, 2);
    ck_assert_uint_eq(c->pcs[1], 0x401100);
    ck_assert_uint_eq(c->hib.total_size, 1000);
    ck_assert_uint_eq(c->live.live_size, 500);
    ck_assert_ptr_null(hr_context_find(&p, 3));
    hr_profile_free(&p);
    free(b.data);
}
END_TEST

/* A PROCESS record without the optional allocator string ends after argv: no error. */
START_TEST(process_without_allocator)
{
    static const char *const argv[] = {"a", "bc"};
    struct ht_buf b = {0};
    ht_file_header(&b);
    ht_process(&b, &(struct hpf_process){.pid = 9, .argc = 2}, "next", "/bin/a", argv);
    ht_record(&b, HPF_REC_SUMMARY, &(struct hpf_summary){0}, sizeof(struct hpf_summary));
    ht_end(&b);
    struct hr_profile p;
    char err[HR_ERR_MAX];
    ck_assert_msg(parse(&b, &p, err) == 0, "%s", err);
    ck_assert_uint_eq(p.process.argc, 2);
    ck_assert(p.argv[1].len == 2 && memcmp(p.argv[1].ptr, "bc", 2) == 0);
    ck_assert(p.backend.len == 4 && memcmp(p.backend.ptr, "next", 4) == 0);
    ck_assert_uint_eq(p.allocator.len, 0);
    hr_profile_free(&p);
    free(b.data);
}
END_TEST

START_TEST(any_order_and_unknown_records)
{
    struct ht_buf b = {0};
    ht_file_header(&b);
    /* LIVE and HIB before the STACK, SUMMARY last, and a record type from the future. */
    struct hpf_live l = {.context_id = 7, .allocs = 1, .bytes = 16};
    ht_record(&b, HPF_REC_LIVE, &l, sizeof l);
    uint8_t future[13] = {1, 2, 3};
    ht_record(&b, 0x4242, future, sizeof future);
    /* PAD, empty and long (the shim's padding over a longer provisional profile): skipped,
     * not counted as unknown. */
    static const uint8_t zeros[4096];
    ht_record(&b, HPF_REC_PAD, zeros, 0);
    ht_record(&b, HPF_REC_PAD, zeros, sizeof zeros);
    struct hpf_hib h = {.context_id = 7, .alloc_count = 1, .total_size = 16};
    ht_record(&b, HPF_REC_HIB, &h, sizeof h);
    uint64_t pc = 0x1234;
    ht_stack(&b, 7, &pc, 1);
    struct hpf_process pr = {.pid = 1};
    ht_process(&b, &pr, "", "", NULL);
    struct hpf_summary s = {0};
    ht_record(&b, HPF_REC_SUMMARY, &s, sizeof s);
    ht_end(&b);
    struct hr_profile p;
    char err[HR_ERR_MAX];
    ck_assert_msg(parse(&b, &p, err) == 0, "%s", err);
    ck_assert_uint_eq(p.unknown_records, 1);
    ck_assert_uint_eq(p.ncontexts, 1);
    ck_assert_uint_eq(p.contexts[0].hib.total_size, 16);
    ck_assert_uint_eq(p.contexts[0].pcs[0], 0x1234);
    hr_profile_free(&p);
    free(b.data);
}
END_TEST

/* A SUMMARY of the length profiles had before killed_by was added parses (killed_by 0); a
 * longer one from the future too; one shorter than the old length does not. */
static void summary_of(struct ht_buf *b, size_t len, uint32_t killed_by)
{
    ht_file_header(b);
    struct hpf_process pr = {.pid = 1, .dump_reason = HPF_DUMP_KILLED};
    ht_process(b, &pr, "", "", NULL);
    uint8_t raw[sizeof(struct hpf_summary) + 16] = {0};
    struct hpf_summary s = {.total_allocs = 5, .truncated_stacks = 9, .killed_by = killed_by};
    memcpy(raw, &s, sizeof s);
    ht_record(b, HPF_REC_SUMMARY, raw, len);
    ht_end(b);
}

START_TEST(summary_lengths)
{
    struct hr_profile p;
    char err[HR_ERR_MAX];
    struct ht_buf b = {0};
    summary_of(&b, HPF_SUMMARY_MIN_SIZE, 15);
    ck_assert_msg(parse(&b, &p, err) == 0, "%s", err);
    ck_assert_uint_eq(p.summary.truncated_stacks, 9);
    ck_assert_uint_eq(p.summary.killed_by, 0); /* cut off: not in an old profile */
    hr_profile_free(&p);
    free(b.data);

    memset(&b, 0, sizeof b);
    summary_of(&b, sizeof(struct hpf_summary) + 16, 15);
    ck_assert_msg(parse(&b, &p, err) == 0, "%s", err);
    ck_assert_uint_eq(p.summary.killed_by, 15);
    ck_assert_uint_eq(p.summary.total_allocs, 5);
    hr_profile_free(&p);
    free(b.data);

    memset(&b, 0, sizeof b);
    summary_of(&b, HPF_SUMMARY_MIN_SIZE - 8, 15);
    expect_error(&b, "SUMMARY record at offset");
    free(b.data);
}
END_TEST

START_TEST(many_contexts_index)
{
    /* Enough contexts to make the index grow several times; ids spread over the range. */
    struct ht_buf b = {0};
    ht_file_header(&b);
    struct hpf_process pr = {0};
    ht_process(&b, &pr, "", "", NULL);
    struct hpf_summary s = {0};
    ht_record(&b, HPF_REC_SUMMARY, &s, sizeof s);
    for (uint32_t i = 1; i <= 5000; i++) {
        struct hpf_hib h = {.context_id = i * 7919, .alloc_count = i, .total_size = i};
        ht_record(&b, HPF_REC_HIB, &h, sizeof h);
    }
    ht_end(&b);
    struct hr_profile p;
    char err[HR_ERR_MAX];
    ck_assert_msg(parse(&b, &p, err) == 0, "%s", err);
    ck_assert_uint_eq(p.ncontexts, 5000);
    for (uint32_t i = 1; i <= 5000; i++) {
        struct hr_context *c = hr_context_find(&p, i * 7919);
        ck_assert_ptr_nonnull(c);
        ck_assert_uint_eq(c->hib.alloc_count, i);
    }
    struct hr_context **v = hr_contexts_sorted(&p, HR_SORT_TOTAL_SIZE);
    ck_assert_uint_eq(v[0]->hib.total_size, 5000);
    ck_assert_uint_eq(v[4999]->hib.total_size, 1);
    free(v);
    hr_profile_free(&p);
    free(b.data);
}
END_TEST

START_TEST(rejects_bad_header)
{
    struct ht_buf b = {0};
    ht_sample(&b);
    b.data[0] = 'X';
    expect_error(&b, "not a heapprof profile");
    b.data[0] = 'H';

    struct hpf_file_header *h = (struct hpf_file_header *)b.data;
    h->version = HPF_VERSION + 1;
    expect_error(&b, "unsupported format version 3");
    h->version = 0;
    expect_error(&b, "unsupported format version 0");
    h->version = HPF_VERSION;

    h->endian_check = 0x04030201u;
    expect_error(&b, "wrong endianness");
    h->endian_check = 0x12345678u;
    expect_error(&b, "endianness check");
    h->endian_check = HPF_ENDIAN_CHECK;

    h->header_size = 12;
    expect_error(&b, "bad header size");
    h->header_size = sizeof *h;

    size_t len = b.len;
    b.len = 20;
    expect_error(&b, "truncated file header");
    b.len = 0;
    expect_error(&b, "empty file");
    b.len = 4;
    expect_error(&b, "not a heapprof profile");
    b.len = len;
    free(b.data);
}
END_TEST

/* A file that simply ends is read up to its last complete record (parse_cut.c). */
static void expect_cut(struct ht_buf *b, uint64_t records, size_t contexts, int rebuilt)
{
    struct hr_profile p;
    char err[HR_ERR_MAX];
    ck_assert_msg(parse(b, &p, err) == 0, "%s", err);
    ck_assert_int_eq(p.cut.cut, 1);
    ck_assert_uint_eq(p.cut.size, b->len);
    ck_assert_uint_eq(p.cut.records, records);
    ck_assert_uint_eq(p.ncontexts, contexts);
    ck_assert_int_eq(p.cut.summary_rebuilt, rebuilt);
    hr_profile_free(&p);
}

START_TEST(reads_cut_profiles)
{
    struct ht_buf b = {0};
    ht_sample(&b);
    size_t len = b.len;
    /* The sample: PROCESS, SUMMARY, 2 STACK, 2 HIB, 2 LIVE, END (16 + 8 bytes). */
    b.len = len - 8; /* END's header kept, its payload cut */
    expect_cut(&b, 8, 2, 0);
    b.len = len - 24; /* exactly before END: every record complete */
    expect_cut(&b, 8, 2, 0);
    b.len = len - 30; /* inside the last LIVE record */
    expect_cut(&b, 7, 2, 0); /* SUMMARY was read: nothing is left out */
    b.len = sizeof(struct hpf_file_header) + 8; /* inside PROCESS's header: nothing usable */
    expect_error(&b, "before its PROCESS record");
    b.len = len;
    free(b.data);
}
END_TEST

START_TEST(rejects_end_problems)
{
    struct ht_buf b = {0};
    ht_sample(&b);
    struct hpf_end *e = (struct hpf_end *)(b.data + b.len - 8);
    e->records += 1;
    expect_error(&b, "END record counts");
    e->records -= 1;
    ht_zeros(&b, 16);
    expect_error(&b, "after the END record");
    free(b.data);
}
END_TEST

START_TEST(rejects_bad_records)
{
    struct ht_buf b = {0};
    struct hpf_process pr = {.argc = 0};
    /* stack depth larger than the record */
    ht_file_header(&b);
    struct hpf_stack s = {.context_id = 1, .depth = 3};
    uint64_t pcs[2] = {1, 2};
    ht_begin(&b, HPF_REC_STACK);
    ht_put(&b, &s, sizeof s);
    ht_put(&b, pcs, sizeof pcs);
    ht_finish(&b);
    ht_end(&b);
    expect_error(&b, "depth 3 does not match");

    /* a PROCESS string length pointing past the record */
    b.len = 0;
    b.records = 0;
    ht_file_header(&b);
    ht_begin(&b, HPF_REC_PROCESS);
    ht_put(&b, &pr, sizeof pr);
    uint32_t huge = 1000;
    ht_put(&b, &huge, 4);
    ht_put(&b, "abcd", 4);
    ht_finish(&b);
    ht_end(&b);
    expect_error(&b, "string overruns");

    /* the allocator's string (after argv) pointing past the record */
    b.len = 0;
    b.records = 0;
    ht_file_header(&b);
    ht_begin(&b, HPF_REC_PROCESS);
    ht_put(&b, &pr, sizeof pr);
    ht_string(&b, "next", 4);
    ht_string(&b, "/bin/x", 6);
    ht_put(&b, &huge, 4);
    ht_put(&b, "/lib", 4);
    ht_finish(&b);
    ht_end(&b);
    expect_error(&b, "string overruns");

    /* argc that cannot fit */
    b.len = 0;
    b.records = 0;
    ht_file_header(&b);
    pr.argc = 0x40000000;
    size_t at = b.len;
    ht_process(&b, &(struct hpf_process){.argc = 0}, "", "", NULL);
    memcpy(b.data + at + sizeof(struct hpf_record_header) + offsetof(struct hpf_process, argc),
           &pr.argc, 4);
    ht_end(&b);
    expect_error(&b, "argc");

    /* MODULE with more segments than bytes, then with a path overrun */
    b.len = 0;
    b.records = 0;
    ht_file_header(&b);
    struct hpf_module m = {.nsegs = 1000};
    ht_record(&b, HPF_REC_MODULE, &m, sizeof m);
    ht_end(&b);
    expect_error(&b, "segments do not fit");
    b.len = 0;
    b.records = 0;
    ht_file_header(&b);
    m.nsegs = 0;
    ht_begin(&b, HPF_REC_MODULE);
    ht_put(&b, &m, sizeof m);
    ht_put(&b, &huge, 4);
    ht_finish(&b);
    ht_end(&b);
    expect_error(&b, "path overruns");

    /* short fixed records */
    b.len = 0;
    b.records = 0;
    ht_file_header(&b);
    ht_record(&b, HPF_REC_HIB, pcs, 16);
    ht_end(&b);
    expect_error(&b, "HIB record at offset 32 too short");

    /* context id 0 and duplicates */
    b.len = 0;
    b.records = 0;
    ht_file_header(&b);
    struct hpf_live l = {.context_id = 0};
    ht_record(&b, HPF_REC_LIVE, &l, sizeof l);
    ht_end(&b);
    expect_error(&b, "context id 0");
    b.len = 0;
    b.records = 0;
    ht_file_header(&b);
    l.context_id = 5;
    ht_record(&b, HPF_REC_LIVE, &l, sizeof l);
    ht_record(&b, HPF_REC_LIVE, &l, sizeof l);
    ht_end(&b);
    expect_error(&b, "second LIVE record for context 5");

    /* complete but without PROCESS / SUMMARY */
    b.len = 0;
    b.records = 0;
    ht_file_header(&b);
    ht_end(&b);
    expect_error(&b, "no PROCESS record");
    free(b.data);
}
END_TEST

/* A file of the given version with PROCESS and SUMMARY; the caller adds records and END. */
static void minimal_head(struct ht_buf *b, uint32_t version)
{
    ht_file_header(b);
    ((struct hpf_file_header *)b->data)->version = version;
    struct hpf_process pr = {.pid = 1};
    ht_process(b, &pr, "", "", NULL);
    struct hpf_summary s = {0};
    ht_record(b, HPF_REC_SUMMARY, &s, sizeof s);
}

/* The frame tree: references before the nodes they name, nodes in two records, pcs that go
 * down as well as up, an empty stack, a stack that is another's outer part, and a context
 * whose stack is written in full beside them. */
START_TEST(frame_tree_parses)
{
    struct ht_buf b = {0};
    minimal_head(&b, HPF_VERSION);
    static const struct hpf_stack_ref refs[] = {{1, 3}, {2, 4}, {3, 1}, {4, 0}, {6, 5}};
    ht_stack_refs(&b, refs, 5);
    static const uint32_t par1[] = {0, 1, 2};
    static const uint64_t pcs1[] = {0x500000, 0x400100, 0x400010};
    ht_frames(&b, 1, 3, par1, pcs1);
    static const uint32_t par2[] = {2, 0};
    static const uint64_t pcs2[] = {0x400020, 0x7fffffffe000ull};
    ht_frames(&b, 4, 2, par2, pcs2);
    uint64_t full[] = {0x600000, 0x600100};
    ht_stack(&b, 5, full, 2);
    ht_end(&b);
    struct hr_profile p;
    char err[HR_ERR_MAX];
    ck_assert_msg(parse(&b, &p, err) == 0, "%s", err);
    ck_assert_uint_eq(p.version, HPF_VERSION);
    struct hr_context *c = hr_context_find(&p, 1);
    ck_assert(c && c->has_stack && c->depth == 3);
    ck_assert_uint_eq(c->pcs[0], 0x400010);
    ck_assert_uint_eq(c->pcs[1], 0x400100);
    ck_assert_uint_eq(c->pcs[2], 0x500000);
    c = hr_context_find(&p, 2);
    ck_assert(c && c->depth == 3 && c->pcs[0] == 0x400020 && c->pcs[1] == 0x400100 &&
              c->pcs[2] == 0x500000);
    c = hr_context_find(&p, 3);
    ck_assert(c && c->depth == 1 && c->pcs[0] == 0x500000);
    c = hr_context_find(&p, 4);
    ck_assert(c && c->has_stack && c->depth == 0);
    c = hr_context_find(&p, 5);
    ck_assert(c && c->depth == 2 && c->pcs[1] == 0x600100);
    c = hr_context_find(&p, 6);
    ck_assert(c && c->depth == 1 && c->pcs[0] == 0x7fffffffe000ull);
    ck_assert_ptr_null(p.node_pc); /* released once resolved */
    hr_profile_free(&p);
    free(b.data);
}
END_TEST

/* Version 1 files have no frame tree and no PACKED records: types 8, 9 and 10 there are
 * unknown ones. */
START_TEST(version1_skips_tree_records)
{
    struct ht_buf b = {0};
    minimal_head(&b, 1);
    static const uint32_t par[] = {0};
    static const uint64_t pcs[] = {0x500000};
    ht_frames(&b, 1, 1, par, pcs);
    static const struct hpf_stack_ref refs[] = {{1, 1}};
    ht_stack_refs(&b, refs, 1);
    struct hpf_live l = {.context_id = 1, .allocs = 1};
    ht_packed(&b, HPF_REC_LIVE, &l, 1, HPF_LIVE_NFIELDS);
    uint64_t pc = 0x1234;
    ht_stack(&b, 2, &pc, 1);
    ht_end(&b);
    struct hr_profile p;
    char err[HR_ERR_MAX];
    ck_assert_msg(parse(&b, &p, err) == 0, "%s", err);
    ck_assert_uint_eq(p.version, 1);
    ck_assert_uint_eq(p.unknown_records, 3);
    ck_assert_ptr_null(hr_context_find(&p, 1));
    ck_assert_uint_eq(hr_context_find(&p, 2)->pcs[0], 0x1234);
    hr_profile_free(&p);
    free(b.data);
}
END_TEST

/* Builds a version 2 file around one damaged record and expects want. */
static void expect_tree_error(void (*add)(struct ht_buf *), const char *want)
{
    struct ht_buf b = {0};
    minimal_head(&b, HPF_VERSION);
    add(&b);
    ht_end(&b);
    expect_error(&b, want);
    free(b.data);
}

static const uint32_t one_par[] = {0};
static const uint64_t one_pc[] = {0x400000};
static void add_gap(struct ht_buf *b) { ht_frames(b, 2, 1, one_par, one_pc); }
static void add_twice(struct ht_buf *b)
{
    ht_frames(b, 1, 1, one_par, one_pc);
    ht_frames(b, 1, 1, one_par, one_pc);
}
static void add_parent_self(struct ht_buf *b)
{
    static const uint8_t enc[] = {0, 1}; /* distance 0: its own parent */
    ht_frames_raw(b, 1, 1, enc, sizeof enc);
}
static void add_parent_far(struct ht_buf *b)
{
    static const uint8_t enc[] = {2, 1}; /* node 1, distance 2: parent -1 */
    ht_frames_raw(b, 1, 1, enc, sizeof enc);
}
static void add_cut_number(struct ht_buf *b)
{
    static const uint8_t enc[] = {1, 0x80, 0x80}; /* the pc's number never ends */
    ht_frames_raw(b, 1, 1, enc, sizeof enc);
}
static void add_long_number(struct ht_buf *b)
{
    static const uint8_t enc[] = {1, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x7f};
    ht_frames_raw(b, 1, 1, enc, sizeof enc); /* 70 bits */
}
static void add_trailing(struct ht_buf *b)
{
    static const uint8_t enc[] = {1, 2, 1, 2, 0};
    ht_frames_raw(b, 1, 2, enc, sizeof enc);
}
static void add_count_lies(struct ht_buf *b)
{
    static const uint8_t enc[] = {1, 2};
    ht_frames_raw(b, 1, 1000000, enc, sizeof enc);
}
static void add_ref_beyond(struct ht_buf *b)
{
    ht_frames(b, 1, 1, one_par, one_pc);
    static const struct hpf_stack_ref refs[] = {{3, 2}};
    ht_stack_refs(b, refs, 1);
}
static void add_ref_zero(struct ht_buf *b)
{
    static const struct hpf_stack_ref refs[] = {{0, 0}};
    ht_stack_refs(b, refs, 1);
}
static void add_ref_twice(struct ht_buf *b)
{
    static const struct hpf_stack_ref refs[] = {{4, 0}};
    ht_stack_refs(b, refs, 1);
    uint64_t pc = 1;
    ht_stack(b, 4, &pc, 1);
}
static void add_refs_count(struct ht_buf *b)
{
    struct hpf_stack_refs h = {.count = 2};
    struct hpf_stack_ref r = {1, 0};
    ht_begin(b, HPF_REC_STACK_REFS);
    ht_put(b, &h, sizeof h);
    ht_put(b, &r, sizeof r);
    ht_finish(b);
}

START_TEST(rejects_bad_tree)
{
    expect_tree_error(add_gap, "starts at node 2, but 0 nodes precede it");
    expect_tree_error(add_twice, "starts at node 1, but 1 nodes precede it");
    expect_tree_error(add_parent_self, "parent distance 0");
    expect_tree_error(add_parent_far, "parent distance 2 (must be 1..1)");
    expect_tree_error(add_cut_number, "node 1 overruns the record or is badly encoded");
    expect_tree_error(add_long_number, "badly encoded");
    expect_tree_error(add_trailing, "1 bytes after its 2 nodes");
    expect_tree_error(add_count_lies, "1000000 nodes do not fit");
    expect_tree_error(add_ref_beyond, "context 3's stack is node 2 of the frame tree, which has 1");
    expect_tree_error(add_ref_zero, "entry 0 has context id 0");
    expect_tree_error(add_ref_twice, "second stack for context 4");
    expect_tree_error(add_refs_count, "count 2 does not match");
}
END_TEST

/* PACKED HIB and LIVE records: merged with fixed ones like any HIB, fields of a newer writer
 * ignored, fields an older one lacks taken as 0, values of every width. */
START_TEST(packed_records_parse)
{
    struct ht_buf b = {0};
    minimal_head(&b, HPF_VERSION);
    struct hpf_hib fixed = {.context_id = 1, .alloc_count = 2, .total_size = 64, .min_size = 32,
                            .max_size = 32, .dealloc_timestamp_ms = 5, .alloc_cpu_id = 1};
    ht_record(&b, HPF_REC_HIB, &fixed, sizeof fixed);
    struct hpf_hib hibs[2] = {
        {.context_id = 1, .flags = HPF_HIB_LIVE_FOLDED, .alloc_count = 3, .total_size = 1ull << 40,
         .min_size = 8, .max_size = UINT64_MAX, .max_percent_utilized = UINT32_MAX,
         .dealloc_timestamp_ms = 9, .alloc_cpu_id = 7, .num_same_dealloc_cpu = 12},
        {.context_id = 300000, .alloc_count = 1, .total_size = 16, .min_size = 16, .max_size = 16},
    };
    ht_packed(&b, HPF_REC_HIB, hibs, 2, HPF_HIB_NFIELDS + 2);
    struct hpf_live lives[2] = {
        {.context_id = 1, .allocs = 5, .bytes = 1ull << 40, .live_count = 3, .last_alloc_ms = 8},
        {.context_id = 300000, .allocs = 1, .bytes = 16, .max_live_size = 16},
    };
    ht_packed(&b, HPF_REC_LIVE, lives, 2, HPF_LIVE_NFIELDS);
    struct hpf_live old = {.context_id = 9, .allocs = 4, .bytes = 40, .live_count = 1};
    ht_packed(&b, HPF_REC_LIVE, &old, 1, 3); /* id, allocs, bytes: the rest is 0 */
    ht_end(&b);
    struct hr_profile p;
    char err[HR_ERR_MAX];
    ck_assert_msg(parse(&b, &p, err) == 0, "%s", err);
    ck_assert_uint_eq(p.unknown_records, 0);
    struct hr_context *c = hr_context_find(&p, 1);
    ck_assert(c && c->has_hib && c->has_live);
    ck_assert_uint_eq(c->hib.alloc_count, 5);
    ck_assert_uint_eq(c->hib.total_size, (1ull << 40) + 64);
    ck_assert_uint_eq(c->hib.min_size, 8);
    ck_assert_uint_eq(c->hib.max_size, UINT64_MAX);
    ck_assert_uint_eq(c->hib.max_percent_utilized, UINT32_MAX);
    ck_assert_uint_eq(c->hib.alloc_cpu_id, 7); /* from the record freed last */
    ck_assert_uint_eq(c->hib.num_same_dealloc_cpu, 12);
    ck_assert_uint_eq(c->hib.flags, HPF_HIB_LIVE_FOLDED);
    ck_assert_uint_eq(c->live.bytes, 1ull << 40);
    ck_assert_uint_eq(c->live.last_alloc_ms, 8);
    c = hr_context_find(&p, 300000);
    ck_assert(c && c->hib.total_size == 16 && c->live.max_live_size == 16);
    c = hr_context_find(&p, 9);
    ck_assert(c && c->live.allocs == 4 && c->live.bytes == 40 && c->live.live_count == 0);
    hr_profile_free(&p);
    free(b.data);
}
END_TEST

static void add_packed_stack(struct ht_buf *b)
{
    struct hpf_packed h = {.type = HPF_REC_STACK, .count = 1, .nfields = 1};
    uint8_t one = 1;
    ht_begin(b, HPF_REC_PACKED);
    ht_put(b, &h, sizeof h);
    ht_put(b, &one, 1);
    ht_finish(b);
}
static void packed_raw(struct ht_buf *b, uint32_t type, uint32_t count, uint32_t nfields,
                       const uint8_t *bytes, size_t n)
{
    struct hpf_packed h = {.type = type, .count = count, .nfields = nfields};
    ht_begin(b, HPF_REC_PACKED);
    ht_put(b, &h, sizeof h);
    ht_put(b, bytes, n);
    ht_finish(b);
}
static const uint8_t three[] = {1, 2, 3};
static void add_packed_lies(struct ht_buf *b) { packed_raw(b, HPF_REC_LIVE, 2, 3, three, 3); }
static void add_packed_nofields(struct ht_buf *b) { packed_raw(b, HPF_REC_LIVE, 1, 0, three, 3); }
static void add_packed_trailing(struct ht_buf *b) { packed_raw(b, HPF_REC_LIVE, 1, 2, three, 3); }
static void add_packed_overrun(struct ht_buf *b)
{
    static const uint8_t cut[] = {1, 2, 0x80};
    packed_raw(b, HPF_REC_LIVE, 1, 3, cut, 3);
}
static void add_packed_wide(struct ht_buf *b)
{
    static const uint8_t wide[] = {0x80, 0x80, 0x80, 0x80, 0x10}; /* 2^32 as a context id */
    packed_raw(b, HPF_REC_HIB, 1, 1, wide, sizeof wide);
}
static void add_packed_zero_id(struct ht_buf *b)
{
    struct hpf_hib h = {.context_id = 0, .alloc_count = 1};
    ht_packed(b, HPF_REC_HIB, &h, 1, HPF_HIB_NFIELDS);
}
static void add_packed_live_twice(struct ht_buf *b)
{
    struct hpf_live l = {.context_id = 5, .allocs = 1};
    ht_record(b, HPF_REC_LIVE, &l, sizeof l);
    ht_packed(b, HPF_REC_LIVE, &l, 1, HPF_LIVE_NFIELDS);
}

START_TEST(rejects_bad_packed)
{
    expect_tree_error(add_packed_stack, "holds records of type 3");
    expect_tree_error(add_packed_lies, "2 entries of 3 fields do not fit");
    expect_tree_error(add_packed_nofields, "1 entries of 0 fields do not fit");
    expect_tree_error(add_packed_trailing, "1 bytes after its 1 entries");
    expect_tree_error(add_packed_overrun, "entry 0 overruns the record or is badly encoded");
    expect_tree_error(add_packed_wide, "entry 0, field 0: 4294967296 does not fit in 32 bits");
    expect_tree_error(add_packed_zero_id, "entry 0 of the PACKED record at offset");
    expect_tree_error(add_packed_live_twice, "second LIVE record for context 5");
}
END_TEST

START_TEST(load_from_file)
{
    struct ht_buf b = {0};
    ht_sample(&b);
    char *path = ht_tmpfile(b.data, b.len);
    struct hr_profile p;
    char err[HR_ERR_MAX];
    ck_assert_msg(hr_profile_load(&p, path, err) == 0, "%s", err);
    ck_assert_str_eq(p.path, path);
    ck_assert_uint_eq(p.ncontexts, 2);
    hr_profile_free(&p);
    unlink(path);
    ck_assert_int_eq(hr_profile_load(&p, path, err), -1);
    ck_assert(strstr(err, "No such file"));
    hr_profile_free(&p);
    ck_assert_int_eq(hr_profile_load(&p, "/tmp", err), -1);
    hr_profile_free(&p);
    free(path);
    free(b.data);
}
END_TEST

int main(void)
{
    TCase *tc = ht_tcase("report_parse", "parse", 0);
    tcase_add_test(tc, sample_parses);
    tcase_add_test(tc, process_without_allocator);
    tcase_add_test(tc, any_order_and_unknown_records);
    tcase_add_test(tc, many_contexts_index);
    tcase_add_test(tc, summary_lengths);
    tcase_add_test(tc, rejects_bad_header);
    tcase_add_test(tc, reads_cut_profiles);
    tcase_add_test(tc, rejects_end_problems);
    tcase_add_test(tc, rejects_bad_records);
    tcase_add_test(tc, frame_tree_parses);
    tcase_add_test(tc, version1_skips_tree_records);
    tcase_add_test(tc, rejects_bad_tree);
    tcase_add_test(tc, packed_records_parse);
    tcase_add_test(tc, rejects_bad_packed);
    tcase_add_test(tc, load_from_file);
    return ht_run();
}
