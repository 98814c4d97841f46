/* Unit tests for the bootstrap arena (bootstrap/bootstrap.c): alignment, sizes, ownership,
 * exhaustion and lock-free concurrent use. Each test runs in its own fork (CK_FORK=yes), so
 * every test starts with an empty arena. */
#include "unit_support.h"

#include "bootstrap/bootstrap.h"

#include <pthread.h>
#include <sched.h>
#include <stdint.h>

#define FIRST (256u << 10) /* BOOT_FIRST: the static region */
#define MORE (8u << 20)    /* BOOT_MORE: the region mapped when that is full */

START_TEST(test_default_alignment_and_size)
{
    for (size_t n = 0; n < 200; n++) {
        void *p = hp_boot_alloc(n, 0);
        ck_assert_ptr_nonnull(p);
        ck_assert_uint_eq((uintptr_t)p % 32, 0);
        ck_assert_uint_eq(hp_boot_size(p), n);
        ck_assert(hp_boot_owns(p));
    }
    /* Alignments below 32 are raised to 32. */
    for (size_t a = 1; a <= 16; a <<= 1) {
        void *p = hp_boot_alloc(3, a);
        ck_assert_ptr_nonnull(p);
        ck_assert_uint_eq((uintptr_t)p % 32, 0);
    }
}
END_TEST

START_TEST(test_large_alignments)
{
    for (size_t a = 64; a <= 4096; a <<= 1)
        for (size_t n = 1; n < 3000; n += 999) {
            void *p = hp_boot_alloc(n, a);
            ck_assert_ptr_nonnull(p);
            ck_assert_uint_eq((uintptr_t)p % a, 0);
            ck_assert_uint_eq(hp_boot_size(p), n);
            memset(p, 0x5a, n); /* the whole block is usable */
        }
}
END_TEST

START_TEST(test_bad_alignment)
{
    uint64_t before = hp_boot_bytes();
    ck_assert_ptr_null(hp_boot_alloc(8, 48));
    ck_assert_ptr_null(hp_boot_alloc(8, 96));
    ck_assert_ptr_null(hp_boot_alloc(8, (size_t)1 << 40));
    ck_assert_ptr_null(hp_boot_alloc(8, ((size_t)1 << 63) + 32)); /* not a power of two */
    ck_assert_uint_eq(hp_boot_bytes(), before);
}
END_TEST

START_TEST(test_first_block_and_bytes)
{
    ck_assert_uint_eq(hp_boot_bytes(), 0);
    char *p = hp_boot_alloc(1, 0);
    /* A 32-byte prefix, then the block rounded to 16. */
    ck_assert_uint_eq(hp_boot_bytes(), 48);
    char *q = hp_boot_alloc(0, 0);
    char *r = hp_boot_alloc(0, 0);
    ck_assert_ptr_nonnull(q);
    ck_assert_ptr_nonnull(r);
    ck_assert_ptr_ne(p, q);
    ck_assert_ptr_ne(q, r); /* zero-size blocks are still distinct */
    ck_assert_uint_eq(hp_boot_size(q), 0);
    ck_assert_int_ge(q - p, 32 + 16);
    ck_assert_int_ge(r - q, 32);
}
END_TEST

START_TEST(test_owns)
{
    char *first = hp_boot_alloc(100, 0);
    ck_assert_ptr_nonnull(first);
    /* The arena is page aligned and the first block sits right after its 32-byte prefix. */
    char *arena = first - 32;
    ck_assert_uint_eq((uintptr_t)arena % 4096, 0);
    ck_assert(hp_boot_owns(first));
    ck_assert(hp_boot_owns(first + 50));
    ck_assert(hp_boot_owns(first + 99));
    ck_assert(hp_boot_owns(arena));
    ck_assert(!hp_boot_owns(arena - 1));
    ck_assert(hp_boot_owns(arena + FIRST - 1));
    ck_assert(!hp_boot_owns(arena + FIRST)); /* one past the end (nothing else mapped yet) */
    ck_assert(!hp_boot_owns(NULL));
    int local;
    ck_assert(!hp_boot_owns(&local));
    void *heap = malloc(16);
    ck_assert(!hp_boot_owns(heap));
    free(heap);
    ck_assert(!hp_boot_owns((void *)(uintptr_t)-1));
}
END_TEST

START_TEST(test_zeroed)
{
    for (int i = 0; i < 64; i++) {
        size_t n = 1000 + (size_t)i * 37;
        unsigned char *p = hp_boot_alloc(n, i % 2 ? 64 : 0);
        ck_assert_ptr_nonnull(p);
        size_t nonzero = 0;
        for (size_t j = 0; j < n; j++)
            nonzero += p[j] != 0;
        ck_assert_msg(nonzero == 0, "block %d has %zu non-zero bytes", i, nonzero);
        memset(p, 0xff, n); /* the next blocks do not overlap this one */
    }
}
END_TEST

START_TEST(test_exhaustion)
{
    size_t mib = 1u << 20;
    int big = 0;
    while (hp_boot_alloc(mib, 0))
        big++;
    /* Each 1 MiB block costs 1 MiB + 32 bytes: none fits the static region, 7 fit the 8 MiB
     * mapped one, an 8th does not. */
    ck_assert_int_eq(big, 7);
    uint64_t used = hp_boot_bytes();
    ck_assert_uint_eq(used, 7 * (mib + 32));
    /* The rest of both is still there for small blocks. */
    uint64_t total = 0;
    int small = 0;
    void *p;
    while ((p = hp_boot_alloc(4000, 0)) != NULL) {
        total += 4000;
        small++;
        ck_assert(hp_boot_owns(p));
        ck_assert_uint_le(hp_boot_bytes(), FIRST + MORE);
    }
    ck_assert_int_gt(small, FIRST / 4032 - 1);
    ck_assert_uint_le(7 * mib + total, FIRST + MORE);
    /* Less than one more 4000-byte block (with its prefix) is left in each. */
    ck_assert_uint_gt(hp_boot_bytes() + 2 * (4000 + 32 + 32), FIRST + MORE);
    uint64_t before = hp_boot_bytes();
    ck_assert_ptr_null(hp_boot_alloc(4000, 0));
    ck_assert_uint_eq(hp_boot_bytes(), before); /* failures do not move the bump */
}
END_TEST

/* The static region is used first; a block that does not fit there comes from the mapped one,
 * made at that moment, and the static region still serves blocks that fit. */
START_TEST(test_second_region)
{
    char *a = hp_boot_alloc(100, 0);
    char *arena = a - 32;
    char *b = hp_boot_alloc(FIRST - 100, 0); /* too big for what is left */
    ck_assert_ptr_nonnull(b);
    ck_assert((uintptr_t)b - (uintptr_t)arena >= FIRST);
    ck_assert(hp_boot_owns(b));
    ck_assert(hp_boot_owns(b + FIRST - 101));
    ck_assert_uint_eq(hp_boot_size(b), FIRST - 100);
    memset(b, 7, FIRST - 100);
    char *c = hp_boot_alloc(200, 0); /* fits after a */
    ck_assert_ptr_nonnull(c);
    ck_assert((uintptr_t)c - (uintptr_t)arena < FIRST);
    ck_assert_ptr_eq(c, a + 160); /* a's 112 bytes, c's prefix, up to 32 */
    /* Static: up to c's end (a at 32, c at 192, 208 bytes); mapped: b's prefix and block. */
    ck_assert_uint_eq(hp_boot_bytes(), 400 + (32 + FIRST - 96));
    char *d = hp_boot_alloc(1000, 4096);
    ck_assert_ptr_nonnull(d);
    ck_assert_uint_eq((uintptr_t)d % 4096, 0);
    ck_assert(hp_boot_owns(d));
}
END_TEST

START_TEST(test_huge_sizes)
{
    ck_assert_ptr_null(hp_boot_alloc(SIZE_MAX, 0));
    ck_assert_ptr_null(hp_boot_alloc(SIZE_MAX - 15, 0));
    ck_assert_ptr_null(hp_boot_alloc(SIZE_MAX - 31, 64));
    ck_assert_ptr_null(hp_boot_alloc((size_t)1 << 63, 0));
    ck_assert_ptr_null(hp_boot_alloc(MORE + 1, 0));
    ck_assert_ptr_null(hp_boot_alloc(MORE, 0)); /* no room for the prefix */
    ck_assert_ptr_null(hp_boot_alloc(MORE - 16, 0));
    ck_assert_uint_eq(hp_boot_bytes(), 0);
    /* The largest block that fits: everything of the mapped region after the first prefix. */
    void *p = hp_boot_alloc(MORE - 32, 0);
    ck_assert_ptr_nonnull(p);
    ck_assert_uint_eq(hp_boot_bytes(), MORE);
    /* ... and of the static one. */
    void *q = hp_boot_alloc(FIRST - 32, 0);
    ck_assert_ptr_nonnull(q);
    ck_assert_uint_eq(hp_boot_bytes(), FIRST + MORE);
    ck_assert_ptr_null(hp_boot_alloc(0, 0));
}
END_TEST

/* ---------- concurrency ---------- */

#define NTHREADS 8
#define PER_THREAD 3000

struct blk {
    uintptr_t p;
    size_t n;
    int owner;
};

static struct blk blocks[NTHREADS * PER_THREAD];
static volatile int go;

static void *worker(void *arg)
{
    int id = (int)(intptr_t)arg;
    while (!__atomic_load_n(&go, __ATOMIC_ACQUIRE))
        sched_yield();
    unsigned seed = (unsigned)id * 2654435761u + 1;
    for (int i = 0; i < PER_THREAD; i++) {
        seed = seed * 1103515245u + 12345u;
        size_t n = 1 + (seed >> 16) % 300;
        size_t align = (seed >> 8) % 4 == 0 ? 128 : 0;
        unsigned char *p = hp_boot_alloc(n, align);
        struct blk *b = &blocks[id * PER_THREAD + i];
        b->p = (uintptr_t)p;
        b->n = n;
        b->owner = id;
        if (p)
            memset(p, id + 1, n);
    }
    return NULL;
}

static int cmp_blk(const void *a, const void *b)
{
    uintptr_t x = ((const struct blk *)a)->p, y = ((const struct blk *)b)->p;
    return x < y ? -1 : x > y;
}

START_TEST(test_concurrent_disjoint)
{
    pthread_t th[NTHREADS];
    for (int i = 0; i < NTHREADS; i++)
        ck_assert_int_eq(pthread_create(&th[i], NULL, worker, (void *)(intptr_t)i), 0);
    __atomic_store_n(&go, 1, __ATOMIC_RELEASE);
    for (int i = 0; i < NTHREADS; i++)
        pthread_join(th[i], NULL);
    size_t n = NTHREADS * PER_THREAD;
    uint64_t sum = 0;
    size_t failed = 0, foreign = 0, badsize = 0, clobbered = 0, overlaps = 0, misaligned = 0;
    for (size_t i = 0; i < n; i++) {
        if (!blocks[i].p) {
            failed++;
            continue;
        }
        foreign += !hp_boot_owns((void *)blocks[i].p);
        badsize += hp_boot_size((void *)blocks[i].p) != blocks[i].n;
        misaligned += blocks[i].p % 32 != 0;
        /* Nobody else wrote into the block. */
        const unsigned char *q = (const unsigned char *)blocks[i].p;
        for (size_t j = 0; j < blocks[i].n; j++)
            clobbered += q[j] != blocks[i].owner + 1;
        sum += blocks[i].n;
    }
    ck_assert_uint_eq(failed, 0);
    ck_assert_uint_eq(foreign, 0);
    ck_assert_uint_eq(badsize, 0);
    ck_assert_uint_eq(misaligned, 0);
    ck_assert_uint_eq(clobbered, 0);
    qsort(blocks, n, sizeof blocks[0], cmp_blk);
    /* Disjoint, with room for the next block's size prefix between them. */
    for (size_t i = 1; i < n; i++)
        overlaps += blocks[i - 1].p + blocks[i - 1].n + 8 > blocks[i].p;
    ck_assert_uint_eq(overlaps, 0);
    ck_assert_uint_le(sum, hp_boot_bytes());
    ck_assert_uint_le(hp_boot_bytes(), FIRST + MORE);
    ck_assert_uint_gt(hp_boot_bytes(), FIRST); /* both regions were used */
}
END_TEST

int main(void)
{
    Suite *s = suite_create("bootstrap");
    TCase *tc = tcase_create("bootstrap");
    tcase_add_test(tc, test_default_alignment_and_size);
    tcase_add_test(tc, test_large_alignments);
    tcase_add_test(tc, test_bad_alignment);
    tcase_add_test(tc, test_first_block_and_bytes);
    tcase_add_test(tc, test_owns);
    tcase_add_test(tc, test_zeroed);
    tcase_add_test(tc, test_exhaustion);
    tcase_add_test(tc, test_second_region);
    tcase_add_test(tc, test_huge_sizes);
    tcase_add_test(tc, test_concurrent_disjoint);
    suite_add_tcase(s, tc);
    return hp_unit_run(s);
}
