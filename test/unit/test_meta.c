/* Unit tests for the metadata arena (shim/meta.c): alignment, zeroing, disjoint blocks, usage
 * accounting and the budget. Each test runs in its own fork with a fresh arena. */
#include "unit_support.h"

#include "rt/rt.h"

#include <pthread.h>
#include <stdint.h>

#define CHUNK (2u << 20)

static size_t count_nonzero(const unsigned char *p, size_t n)
{
    size_t c = 0;
    for (size_t i = 0; i < n; i++)
        c += p[i] != 0;
    return c;
}

struct range {
    uintptr_t p;
    size_t n;
};

static int cmp_range(const void *a, const void *b)
{
    uintptr_t x = ((const struct range *)a)->p, y = ((const struct range *)b)->p;
    return x < y ? -1 : x > y;
}

static size_t count_overlaps(struct range *r, size_t n)
{
    qsort(r, n, sizeof *r, cmp_range);
    size_t bad = 0;
    for (size_t i = 1; i < n; i++)
        bad += r[i - 1].p + r[i - 1].n > r[i].p;
    return bad;
}

START_TEST(test_aligned_zeroed_disjoint)
{
    hp_meta_init(64u << 20);
    ck_assert_uint_eq(hp_meta_used(), 0);
    ck_assert_uint_eq(hp_meta_budget(), 64u << 20);
    enum { N = 3000 };
    static struct range r[N];
    size_t misaligned = 0, dirty = 0;
    for (int i = 0; i < N; i++) {
        size_t n = 1 + (size_t)(i * 37) % 2000;
        unsigned char *p = hp_meta_alloc(n);
        ck_assert_ptr_nonnull(p);
        misaligned += (uintptr_t)p % 64 != 0;
        dirty += count_nonzero(p, n);
        memset(p, 0xa5, n); /* would show up as dirt in a later overlapping block */
        r[i].p = (uintptr_t)p;
        r[i].n = n;
    }
    ck_assert_uint_eq(misaligned, 0);
    ck_assert_uint_eq(dirty, 0);
    ck_assert_uint_eq(count_overlaps(r, N), 0);
}
END_TEST

START_TEST(test_used_grows_by_chunks)
{
    hp_meta_init(64u << 20);
    ck_assert_uint_eq(hp_meta_used(), 0);
    char *a = hp_meta_alloc(1);
    ck_assert_ptr_nonnull(a);
    ck_assert_uint_eq(hp_meta_used(), CHUNK);
    /* Sizes round up to a cache line: the next block follows 64 bytes later. */
    char *b = hp_meta_alloc(64);
    ck_assert_ptr_eq(b, a + 64);
    char *c = hp_meta_alloc(65);
    ck_assert_ptr_eq(c, b + 64);
    char *d = hp_meta_alloc(1);
    ck_assert_ptr_eq(d, c + 128);
    ck_assert_uint_eq(hp_meta_used(), CHUNK);
    /* Fill the first chunk; the next block needs a second one. */
    size_t left = CHUNK - 256;
    for (; left >= 4096; left -= 4096)
        ck_assert_ptr_nonnull(hp_meta_alloc(4096));
    ck_assert_uint_eq(hp_meta_used(), CHUNK);
    ck_assert_ptr_nonnull(hp_meta_alloc(left + 64));
    ck_assert_uint_eq(hp_meta_used(), 2 * CHUNK);
}
END_TEST

START_TEST(test_budget_enforced)
{
    uint64_t budget = 4u << 20;
    hp_meta_init(budget);
    int n = 0;
    unsigned char *p, *last = NULL;
    while ((p = hp_meta_alloc(4096)) != NULL) {
        n++;
        last = p;
        ck_assert_uint_le(hp_meta_used(), budget);
    }
    /* Two 2 MiB chunks of 512 blocks each fit in 4 MiB. */
    ck_assert_int_eq(n, 1024);
    ck_assert_uint_eq(hp_meta_used(), budget);
    ck_assert_uint_eq(count_nonzero(last, 4096), 0);
    /* Everything else fails too, without changing the accounting. */
    ck_assert_ptr_null(hp_meta_alloc(64));
    ck_assert_ptr_null(hp_meta_map(4096));
    ck_assert_ptr_null(hp_meta_alloc(1u << 20)); /* large: goes through hp_meta_map */
    ck_assert_uint_eq(hp_meta_used(), budget);
}
END_TEST

START_TEST(test_budget_partial_chunk)
{
    /* A budget that is not a multiple of the chunk: the chunk that does not fit is refused. */
    hp_meta_init(3u << 20);
    int n = 0;
    while (hp_meta_alloc(1024))
        n++;
    ck_assert_int_eq(n, 2048); /* one chunk */
    ck_assert_uint_eq(hp_meta_used(), CHUNK);
    /* Whole pages still fit under the budget through hp_meta_map. */
    void *m = hp_meta_map(1u << 20);
    ck_assert_ptr_nonnull(m);
    ck_assert_uint_eq(hp_meta_used(), 3u << 20);
    ck_assert_ptr_null(hp_meta_map(1));
}
END_TEST

START_TEST(test_zero_budget)
{
    hp_meta_init(0);
    ck_assert_ptr_null(hp_meta_alloc(1));
    ck_assert_ptr_null(hp_meta_map(1));
    ck_assert_uint_eq(hp_meta_used(), 0);
}
END_TEST

/* What the arena costs in memory: only the pages written to, from chunks and maps alike. */
START_TEST(test_resident)
{
    hp_meta_init(64u << 20);
    ck_assert_uint_eq(hp_meta_resident(), 0);
    unsigned char *map = hp_meta_map(8u << 20);
    unsigned char *small = hp_meta_alloc(64);
    ck_assert_ptr_nonnull(map);
    ck_assert_ptr_nonnull(small);
    ck_assert_uint_eq(hp_meta_used(), (8u << 20) + CHUNK);
    uint64_t before = hp_meta_resident();
    ck_assert_uint_le(before, 4096); /* the small block's page, if the zeroing check read it */
    for (size_t off = 0; off < (1u << 20); off += 4096)
        map[off] = 1; /* 256 pages of the map */
    small[0] = 1;
    uint64_t after = hp_meta_resident();
    ck_assert_uint_ge(after, (256u + 1) * 4096);
    ck_assert_uint_le(after, (256u + 1) * 4096 + 4096);
    ck_assert_uint_le(after, hp_meta_used());
}
END_TEST

START_TEST(test_map_large)
{
    hp_meta_init(64u << 20);
    size_t big = 10u << 20;
    unsigned char *p = hp_meta_map(big);
    ck_assert_ptr_nonnull(p);
    ck_assert_uint_eq((uintptr_t)p % 4096, 0);
    ck_assert_uint_eq(hp_meta_used(), big);
    ck_assert_uint_eq(count_nonzero(p, big), 0);
    memset(p, 1, big);
    /* Sizes round up to pages. */
    unsigned char *q = hp_meta_map(5000);
    ck_assert_ptr_nonnull(q);
    ck_assert_uint_eq(hp_meta_used(), big + 8192);
    q[8191] = 1;
    /* A large hp_meta_alloc gets a mapping of its own. */
    unsigned char *r = hp_meta_alloc(CHUNK); /* > CHUNK / 4 */
    ck_assert_ptr_nonnull(r);
    ck_assert_uint_eq((uintptr_t)r % 4096, 0);
    ck_assert_uint_eq(hp_meta_used(), big + 8192 + CHUNK);
    ck_assert_uint_eq(count_nonzero(r, CHUNK), 0);
    /* Over the budget in one request. */
    ck_assert_ptr_null(hp_meta_map(64u << 20));
    ck_assert_uint_eq(hp_meta_used(), big + 8192 + CHUNK);
}
END_TEST

/* KNOWN BUG (reported, not fixed here): the cache-line rounding in hp_meta_alloc wraps for sizes
 * near SIZE_MAX, and a 0-byte block is returned instead of NULL. */
START_TEST(test_alloc_huge_fails)
{
    hp_meta_init(64u << 20);
    ck_assert_ptr_nonnull(hp_meta_alloc(64)); /* a chunk is current */
    ck_assert_ptr_null(hp_meta_alloc(SIZE_MAX));
    ck_assert_ptr_null(hp_meta_alloc(SIZE_MAX - 62));
}
END_TEST

START_TEST(test_map_huge_fails)
{
    hp_meta_init(64u << 20);
    ck_assert_ptr_null(hp_meta_map(SIZE_MAX));
    ck_assert_ptr_null(hp_meta_map(SIZE_MAX - 8191));
    ck_assert_ptr_null(hp_meta_map((size_t)1 << 62));
    ck_assert_uint_eq(hp_meta_used(), 0);
}
END_TEST

/* A signal handler's allocation while its own thread holds the arena's lock (here: held by the
 * test, as fork's prepare handler holds it): from the reserve, which is then counted, until it
 * is spent; with the lock free, from the arena as usual. */
START_TEST(test_nested_alloc)
{
    hp_meta_init(64u << 20);
    unsigned char *a = hp_meta_alloc_nested(100);
    ck_assert_ptr_nonnull(a);
    ck_assert_uint_eq(hp_meta_used(), CHUNK); /* the lock was free: a chunk */
    hp_meta_fork_prepare();
    unsigned char *b = hp_meta_alloc_nested(100);
    ck_assert_ptr_nonnull(b);
    ck_assert_uint_eq((uintptr_t)b % 64, 0);
    ck_assert_uint_eq(count_nonzero(b, 128), 0);
    ck_assert_uint_eq(hp_meta_used(), CHUNK + (256u << 10));
    unsigned char *c = hp_meta_alloc_nested(64);
    ck_assert_ptr_eq(c, b + 128);
    int n = 2;
    while (hp_meta_alloc_nested(4096))
        n++;
    ck_assert_int_eq(n, 2 + ((256 << 10) - 192) / 4096);
    ck_assert_ptr_null(hp_meta_alloc_nested(CHUNK)); /* never a map of its own */
    hp_meta_fork_parent();
    ck_assert_ptr_eq(hp_meta_alloc_nested(64), a + 128);
    ck_assert_uint_eq(hp_meta_used(), CHUNK + (256u << 10));
}
END_TEST

/* ---------- concurrency ---------- */

#define NT 4
#define PER 4000
static struct range tr[NT * PER];

static void *worker(void *arg)
{
    int id = (int)(intptr_t)arg;
    for (int i = 0; i < PER; i++) {
        size_t n = 16 + (size_t)((i * 13 + id) % 200);
        unsigned char *p = hp_meta_alloc(n);
        if (p)
            memset(p, id + 1, n);
        tr[id * PER + i].p = (uintptr_t)p;
        tr[id * PER + i].n = n;
    }
    return NULL;
}

START_TEST(test_concurrent)
{
    hp_meta_init(64u << 20);
    pthread_t th[NT];
    for (int i = 0; i < NT; i++)
        ck_assert_int_eq(pthread_create(&th[i], NULL, worker, (void *)(intptr_t)i), 0);
    for (int i = 0; i < NT; i++)
        pthread_join(th[i], NULL);
    size_t failed = 0, clobbered = 0;
    for (int id = 0; id < NT; id++)
        for (int i = 0; i < PER; i++) {
            const struct range *r = &tr[id * PER + i];
            if (!r->p) {
                failed++;
                continue;
            }
            for (size_t j = 0; j < r->n; j++)
                clobbered += ((const unsigned char *)r->p)[j] != id + 1;
        }
    ck_assert_uint_eq(failed, 0);
    ck_assert_uint_eq(clobbered, 0);
    ck_assert_uint_eq(count_overlaps(tr, NT * PER), 0);
    ck_assert_uint_le(hp_meta_used(), 64u << 20);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("meta");
    TCase *tc = tcase_create("meta");
    tcase_add_test(tc, test_aligned_zeroed_disjoint);
    tcase_add_test(tc, test_used_grows_by_chunks);
    tcase_add_test(tc, test_budget_enforced);
    tcase_add_test(tc, test_budget_partial_chunk);
    tcase_add_test(tc, test_zero_budget);
    tcase_add_test(tc, test_map_large);
    tcase_add_test(tc, test_resident);
    tcase_add_test(tc, test_alloc_huge_fails);
    tcase_add_test(tc, test_map_huge_fails);
    tcase_add_test(tc, test_nested_alloc);
    tcase_add_test(tc, test_concurrent);
    suite_add_tcase(s, tc);
    return hp_unit_run(s);
}
