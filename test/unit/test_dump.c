/* Unit tests for the stack part of a dump (shim/dump/stacks.c, hp_write_stacks): the frame tree
 * of format version 2. Contexts are put straight into the depot's id table; the records written
 * are decoded here independently of the report tool, and every context's stack must come back
 * exactly, from a tree with one node per distinct outer part of the stacks (no node twice). */
#include "unit_support.h"

#include "core/core.h"
#include "profile/profile.h"
#include "unwind/unwind.h"
#include "dump/dump.h"
#include "rt/rt.h"
#include "format/format.h"

#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

void hp_test_write_stacks(int fd, uint32_t n);

static void init_profiler(void)
{
    hp_options_parse(&hp_opt, "");
    hp_clock_init();
    hp_meta_init(64u << 20);
    hp_profile_init(hp_spool_hib);
    hp_init_state = HP_INIT_DONE;
}

static struct hp_ctx *new_ctx(uint32_t id, const uintptr_t *pcs, uint32_t depth)
{
    struct hp_ctx *c = calloc(1, sizeof *c + depth * sizeof c->pcs[0]);
    ck_assert_ptr_nonnull(c);
    c->id = id;
    c->depth = depth;
    c->allocs = 1; /* a context without allocations is not written */
    memcpy(c->pcs, pcs, depth * sizeof pcs[0]);
    hp_prof.by_id[id] = c;
    return c;
}

/* The context a dump writes for id, or NULL. */
static const struct hp_ctx *written_ctx(uint32_t id)
{
    const struct hp_ctx *c = hp_prof.by_id[id];
    return c && c->allocs ? c : NULL;
}

/* ---------- an independent decoder ---------- */

struct decoded {
    uint64_t *pc;
    uint32_t *parent;
    uint32_t nnodes, cap;
    uint32_t nframes_records;
    struct hpf_stack_ref *refs;
    uint32_t nrefs;
    uint32_t nstack_records;
};

static uint64_t uleb(const uint8_t **p, const uint8_t *end)
{
    uint64_t v = 0;
    for (unsigned shift = 0;; shift += 7) {
        ck_assert_msg(*p < end && shift < 64, "number runs past its record");
        uint8_t b = *(*p)++;
        v |= (uint64_t)(b & 0x7f) << shift;
        if (!(b & 0x80))
            return v;
    }
}

static void decode(const uint8_t *buf, size_t len, struct decoded *d)
{
    memset(d, 0, sizeof *d);
    size_t off = 0;
    while (off < len) {
        struct hpf_record_header rh;
        ck_assert_uint_ge(len - off, sizeof rh);
        memcpy(&rh, buf + off, sizeof rh);
        ck_assert_uint_eq(off % 8, 0);
        const uint8_t *p = buf + off + sizeof rh, *end = p + rh.size;
        ck_assert_uint_le(rh.size, len - off - sizeof rh);
        if (rh.type == HPF_REC_FRAMES) {
            struct hpf_frames f;
            memcpy(&f, p, sizeof f);
            p += sizeof f;
            ck_assert_uint_eq(f.first_node, d->nnodes + 1);
            if (d->nnodes + f.count + 1 > d->cap) {
                d->cap = (d->nnodes + f.count + 1) * 2;
                d->pc = realloc(d->pc, d->cap * sizeof *d->pc);
                d->parent = realloc(d->parent, d->cap * sizeof *d->parent);
            }
            uint64_t prev = 0;
            for (uint32_t i = 0; i < f.count; i++) {
                uint32_t id = d->nnodes + 1;
                uint64_t up = uleb(&p, end);
                ck_assert(up >= 1 && up <= id);
                prev += hpf_unzigzag(uleb(&p, end));
                d->pc[id] = prev;
                d->parent[id] = (uint32_t)(id - up);
                d->nnodes = id;
            }
            ck_assert_ptr_eq(p, end);
            d->nframes_records++;
        } else if (rh.type == HPF_REC_STACK_REFS) {
            struct hpf_stack_refs h;
            memcpy(&h, p, sizeof h);
            ck_assert_uint_eq(rh.size, sizeof h + (uint64_t)h.count * sizeof(struct hpf_stack_ref));
            d->refs = realloc(d->refs, (d->nrefs + h.count) * sizeof *d->refs);
            memcpy(d->refs + d->nrefs, p + sizeof h, h.count * sizeof *d->refs);
            d->nrefs += h.count;
        } else if (rh.type == HPF_REC_STACK) {
            d->nstack_records++;
        } else {
            ck_abort_msg("unexpected record type %u", rh.type);
        }
        off += sizeof rh + ((rh.size + 7) & ~(uint64_t)7);
    }
    ck_assert_uint_eq(off, len);
}

/* The stack of node n, innermost first, into out; returns its depth. */
static uint32_t stack_of(const struct decoded *d, uint32_t n, uint64_t *out)
{
    uint32_t k = 0;
    for (; n; n = d->parent[n]) {
        ck_assert_uint_lt(k, 1024);
        out[k++] = d->pc[n];
    }
    return k;
}

static size_t write_and_read(uint32_t n, uint8_t **buf)
{
    FILE *f = tmpfile();
    ck_assert_ptr_nonnull(f);
    hp_test_write_stacks(fileno(f), n);
    long len = lseek(fileno(f), 0, SEEK_END);
    ck_assert_int_ge(len, 0);
    *buf = malloc((size_t)len + 1);
    ck_assert_int_eq(pread(fileno(f), *buf, (size_t)len, 0), len);
    fclose(f);
    return (size_t)len;
}

/* Outer parts of the stacks (as (context, length) pairs), for counting the distinct ones. */
struct part {
    const struct hp_ctx *c;
    uint32_t len;
};

static int part_cmp(const void *x, const void *y)
{
    const struct part *a = x, *b = y;
    if (a->len != b->len)
        return a->len < b->len ? -1 : 1;
    for (uint32_t i = 1; i <= a->len; i++) {
        uintptr_t p = a->c->pcs[a->c->depth - i], q = b->c->pcs[b->c->depth - i];
        if (p != q)
            return p < q ? -1 : 1;
    }
    return 0;
}

static uint32_t distinct_parts(uint32_t n)
{
    size_t total = 0;
    for (uint32_t id = 1; id < n; id++)
        if (written_ctx(id))
            total += written_ctx(id)->depth;
    struct part *v = malloc((total + 1) * sizeof *v);
    size_t k = 0;
    for (uint32_t id = 1; id < n; id++)
        for (uint32_t l = 1; written_ctx(id) && l <= written_ctx(id)->depth; l++)
            v[k++] = (struct part){written_ctx(id), l};
    qsort(v, k, sizeof *v, part_cmp);
    uint32_t d = 0;
    for (size_t i = 0; i < k; i++)
        d += i == 0 || part_cmp(&v[i - 1], &v[i]) != 0;
    free(v);
    return d;
}

/* Every context of 1..n-1 comes back with its own stack, once; the tree has no node twice. */
static void check_round_trip(uint32_t n, uint32_t want_frames_records_min)
{
    uint8_t *buf;
    size_t len = write_and_read(n, &buf);
    struct decoded d;
    decode(buf, len, &d);
    ck_assert_uint_eq(d.nstack_records, 0);
    ck_assert_uint_ge(d.nframes_records, want_frames_records_min);
    uint32_t contexts = 0;
    for (uint32_t id = 1; id < n; id++)
        contexts += written_ctx(id) != NULL;
    ck_assert_uint_eq(d.nrefs, contexts);
    static uint64_t st[1024];
    static unsigned char seen[1 << 16];
    memset(seen, 0, sizeof seen);
    for (uint32_t i = 0; i < d.nrefs; i++) {
        uint32_t id = d.refs[i].context_id;
        ck_assert(id > 0 && id < n && written_ctx(id));
        ck_assert_msg(!seen[id], "context %u referred to twice", id);
        seen[id] = 1;
        ck_assert_uint_le(d.refs[i].node, d.nnodes);
        const struct hp_ctx *c = hp_prof.by_id[id];
        uint32_t depth = stack_of(&d, d.refs[i].node, st);
        ck_assert_uint_eq(depth, c->depth);
        for (uint32_t j = 0; j < depth; j++)
            ck_assert_msg(st[j] == c->pcs[j], "context %u frame %u", id, j);
    }
    ck_assert_uint_eq(d.nnodes, distinct_parts(n));
    free(d.pc);
    free(d.parent);
    free(d.refs);
    free(buf);
}

static uint64_t rng = 0x9e3779b97f4a7c15ull;
static uint64_t next_rand(void)
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return rng;
}

/* ---------- tests ---------- */

START_TEST(shared_outer_frames)
{
    init_profiler();
    /* main -> run -> {a, b}; a -> malloc site x; b -> x too; and run itself allocating. */
    uintptr_t s1[] = {0x4010, 0x4100, 0x4200, 0x4300}; /* innermost first */
    uintptr_t s2[] = {0x4011, 0x4101, 0x4200, 0x4300};
    uintptr_t s3[] = {0x4200, 0x4300};                 /* the outer part of both */
    uintptr_t s4[] = {0x4012, 0x4100, 0x4200, 0x4300};
    uintptr_t s6[] = {0x7fff00001000, 0x10};           /* a pc far below its caller's */
    new_ctx(1, s1, 4);
    new_ctx(2, s2, 4);
    new_ctx(3, s3, 2);
    new_ctx(4, s4, 4);
    new_ctx(5, NULL, 0); /* no frames at all */
    new_ctx(7, s6, 2);   /* 6: a hole in the ids */
    new_ctx(8, s1, 4);   /* the depot never holds one stack twice, but the writer copes */
    new_ctx(9, s3, 2);
    new_ctx(10, s3, 2);
    /* Made by a thread after the dump flushed it: its allocation is not in the dump, nor
     * its stack (the only one with 0x4400). */
    uintptr_t s7[] = {0x4400, 0x4200, 0x4300};
    new_ctx(11, s7, 3)->allocs = 0;
    hp_prof.next_id = 12;
    check_round_trip(12, 1);
    /* 0x4300, 0x4200, then 0x4100 (+0x4010, 0x4012) and 0x4101 (+0x4011), 0x10 (+far): 9. */
    ck_assert_uint_eq(distinct_parts(12), 9);
}
END_TEST

START_TEST(random_stacks)
{
    init_profiler();
    /* Stacks grown from a few thousand random "call sites", outermost first, so that they
     * share outer parts as real programs' do; some are the outer part of an earlier stack,
     * some repeat one whole; depths up to 256 (stack_depth's largest). Enough nodes for several
     * records, enough contexts for the sort's partitions as well as its insertion sorts. */
    enum { N = 3000 };
    static uintptr_t pcs[N][256];
    uint32_t depth[N];
    for (uint32_t i = 1; i < N; i++) {
        uint32_t d = (uint32_t)(next_rand() % 48);
        if (i % 97 == 0)
            d = 256;
        uint32_t keep = 0;
        uint32_t from = (uint32_t)(next_rand() % i);
        if (from && (next_rand() & 3)) /* share an outer part with an earlier stack */
            keep = depth[from] ? (uint32_t)(next_rand() % (depth[from] + 1)) : 0;
        if (from && i % 31 == 0) /* the same stack as an earlier one */
            d = keep = depth[from];
        if (keep > d)
            keep = d;
        uintptr_t outer[256]; /* outermost first */
        for (uint32_t j = 0; j < keep; j++)
            outer[j] = pcs[from][depth[from] - 1 - j];
        for (uint32_t j = keep; j < d; j++)
            outer[j] = 0x400000 + (next_rand() % 4000) * 16 + (next_rand() & 1 ? 0x7f0000000000ull : 0);
        depth[i] = d;
        for (uint32_t j = 0; j < d; j++)
            pcs[i][j] = outer[d - 1 - j];
        if (i % 5 == 0)
            continue; /* a hole */
        new_ctx(i, pcs[i], d);
    }
    hp_prof.next_id = N;
    check_round_trip(N, 2);
}
END_TEST

START_TEST(long_shared_prefix)
{
    init_profiler();
    /* What python3's stacks look like to the sort: hundreds share their 40 outermost frames,
     * then part in short tails; one is the shared part alone, some end inside it, some repeat
     * another whole, groups of them share 10 more frames. The sort skips each run of frames
     * a whole part shares at once, and must leave the same tree as frame-by-frame partitioning. */
    enum { N = 700, PREFIX = 40 };
    static uintptr_t pcs[N][64];
    uint32_t depth[N];
    uintptr_t prefix[PREFIX], group[8][10]; /* outermost first */
    for (uint32_t j = 0; j < PREFIX; j++)
        prefix[j] = 0x500000 + j * 64;
    for (uint32_t g = 0; g < 8; g++)
        for (uint32_t j = 0; j < 10; j++)
            group[g][j] = 0x600000 + (next_rand() % 64) * 16;
    for (uint32_t i = 1; i < N; i++) {
        uintptr_t outer[64];
        uint32_t d = 0;
        if (i % 50 == 0) { /* ends inside the shared part */
            d = 1 + (uint32_t)(next_rand() % PREFIX);
            for (uint32_t j = 0; j < d; j++)
                outer[j] = prefix[j];
        } else if (i == 7) { /* the shared part alone */
            for (; d < PREFIX; d++)
                outer[d] = prefix[d];
        } else if (i % 37 == 0) { /* the same as an earlier stack */
            uint32_t from = 1 + (uint32_t)(next_rand() % (i - 1));
            d = depth[from];
            for (uint32_t j = 0; j < d; j++)
                outer[j] = pcs[from][d - 1 - j];
        } else {
            for (; d < PREFIX; d++)
                outer[d] = prefix[d];
            if (i % 3 == 0) { /* 10 more frames its group shares */
                const uintptr_t *gr = group[next_rand() % 8];
                for (uint32_t j = 0; j < 10; j++)
                    outer[d++] = gr[j];
            }
            uint32_t tail = (uint32_t)(next_rand() % 6);
            for (uint32_t j = 0; j < tail; j++)
                outer[d++] = 0x700000 + (next_rand() % 8) * 16;
        }
        depth[i] = d;
        for (uint32_t j = 0; j < d; j++)
            pcs[i][j] = outer[d - 1 - j];
        new_ctx(i, pcs[i], d);
    }
    hp_prof.next_id = N;
    check_round_trip(N, 1);
}
END_TEST

/* ---------- naming a whole dump (shim/dump/paths.c, hp_place_file) ---------- */

int hp_test_place_file(const char *tmp, const char *path, char *used, size_t cap, int plain);

static void put(const char *path, const char *text)
{
    FILE *f = fopen(path, "w");
    ck_assert_ptr_nonnull(f);
    fputs(text, f);
    fclose(f);
}

static int holds(const char *path, const char *text)
{
    char buf[64] = {0};
    FILE *f = fopen(path, "r");
    if (!f)
        return 0;
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    fclose(f);
    return n == strlen(text) && memcmp(buf, text, n) == 0;
}

/* Each way of naming (renameat2 without replacing, a hard link, a rename once the name is seen
 * free): the first free name of path, path-1, path-2, ... is taken, no existing file (nor a
 * symbolic link, dangling or not) is replaced, and the .tmp is gone. */
START_TEST(place_never_replaces)
{
    int plain = _i;
    char dir[] = "/tmp/heapprof-place.XXXXXX";
    ck_assert_ptr_nonnull(mkdtemp(dir));
    char tmp[256], path[256], p1[256], p2[256], used[256];
    snprintf(tmp, sizeof tmp, "%s/p.hpf.1.tmp", dir);
    snprintf(path, sizeof path, "%s/p.hpf.1", dir);
    snprintf(p1, sizeof p1, "%s/p.hpf.1-1", dir);
    snprintf(p2, sizeof p2, "%s/p.hpf.1-2", dir);

    put(tmp, "first");
    ck_assert_int_eq(hp_test_place_file(tmp, path, used, sizeof used, plain), 0);
    ck_assert_str_eq(used, path);
    ck_assert(holds(path, "first"));
    ck_assert_int_ne(access(tmp, F_OK), 0);

    put(tmp, "second"); /* path is taken: path-1 */
    ck_assert_int_eq(hp_test_place_file(tmp, path, used, sizeof used, plain), 0);
    ck_assert_str_eq(used, p1);
    ck_assert(holds(path, "first"));
    ck_assert(holds(p1, "second"));
    ck_assert_int_ne(access(tmp, F_OK), 0);

    ck_assert_int_eq(symlink("/nonexistent/heapprof-target", p2), 0); /* dangling: still taken */
    put(tmp, "third");
    ck_assert_int_eq(hp_test_place_file(tmp, path, used, sizeof used, plain), 0);
    char p3[256];
    snprintf(p3, sizeof p3, "%s/p.hpf.1-3", dir);
    ck_assert_str_eq(used, p3);
    ck_assert(holds(p3, "third"));
    struct stat st;
    ck_assert_int_eq(lstat(p2, &st), 0);
    ck_assert(S_ISLNK(st.st_mode));

    /* No tmp: an error, nothing made. */
    ck_assert_int_eq(hp_test_place_file(tmp, path, used, sizeof used, plain), -1);
    char p4[256];
    snprintf(p4, sizeof p4, "%s/p.hpf.1-4", dir);
    ck_assert_int_ne(access(p4, F_OK), 0);

    const char *all[] = {path, p1, p2, p3};
    for (unsigned i = 0; i < 4; i++)
        unlink(all[i]);
    ck_assert_int_eq(rmdir(dir), 0);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("dump");
    TCase *tc = tcase_create("stacks");
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, shared_outer_frames);
    tcase_add_test(tc, random_stacks);
    tcase_add_test(tc, long_shared_prefix);
    tcase_add_loop_test(tc, place_never_replaces, 0, 3);
    suite_add_tcase(s, tc);
    return hp_unit_run(s);
}
