/* Unit tests for the cfi unwinder (shim/cfi.c): a walk that reuses the previous walk's frames
 * must give exactly what a walk from scratch gives, with the same hash, on stacks that keep
 * changing under it (the same frames reached from other call sites at the same stack
 * pointers, deeper and shallower stacks, truncation); and the rseq cpu id matches
 * sched_getcpu. */
#include "unit_support.h"

#include "cfi.h"
#include "hp.h"
#include "meta.h"
#include "options.h"

#include <sched.h>
#include <stdint.h>

extern void *__libc_stack_end;

static struct hp_walk_cache wc;

struct result {
    int n, truncated;
    uint64_t hash;
    uintptr_t pcs[HP_WALK_MAX];
};

static struct result cached, plain;
static int max_depth = 64;
static int compare = 1; /* level() checks each capture */

/* Walk from this function's caller twice: with the cache and from scratch. */
static __attribute__((noinline)) void capture(void)
{
    uintptr_t *fp = __builtin_frame_address(0);
    uintptr_t ip = fp[1], sp = (uintptr_t)(fp + 2), bp = fp[0];
    uintptr_t hi = (uintptr_t)__libc_stack_end;
    const uintptr_t *out;
    uintptr_t buf[HP_WALK_MAX];
    cached.truncated = 0;
    cached.n = hp_cfi_walk(ip, sp, bp, hi, buf, max_depth, &cached.truncated, &wc, &out, &cached.hash);
    memcpy(cached.pcs, out, (size_t)cached.n * sizeof *out);
    plain.truncated = 0;
    plain.n = hp_cfi_walk(ip, sp, bp, hi, plain.pcs, max_depth, &plain.truncated, NULL, &out, &plain.hash);
    ck_assert_ptr_eq(out, plain.pcs);
}

static void check_same(void)
{
    ck_assert_int_gt(plain.n, 3);
    ck_assert_int_eq(cached.n, plain.n);
    ck_assert_int_eq(cached.truncated, plain.truncated);
    for (int i = 0; i < plain.n; i++)
        ck_assert_msg(cached.pcs[i] == plain.pcs[i], "frame %d of %d differs", i, plain.n);
    ck_assert_uint_eq(cached.hash, plain.hash);
    ck_assert_uint_eq(plain.hash, hp_stack_hash(plain.pcs, plain.n));
}

/* Recursion whose call site at each level is chosen by a bit of path: two stacks with the same
 * depth have their frames at the same stack pointers but differ in return addresses anywhere. */
static volatile int sink;
static __attribute__((noinline)) void level(int depth, unsigned path);

static __attribute__((noinline)) void site_a(int depth, unsigned path)
{
    level(depth - 1, path >> 1);
    sink++;
}

static __attribute__((noinline)) void site_b(int depth, unsigned path)
{
    sink--;
    level(depth - 1, path >> 1);
    sink++;
}

static int capture_at; /* the depth at which level() captures */

static __attribute__((noinline)) void level(int depth, unsigned path)
{
    if (depth == capture_at) {
        capture();
        if (compare)
            check_same();
    } else if (path & 1) {
        site_a(depth, path);
    } else {
        site_b(depth, path);
    }
    sink++;
}

static void setup(void)
{
    hp_options_parse(&hp_opt, "");
    hp_meta_init(64u << 20);
    hp_stack_init();
    hp_cfi_init();
    hp_walk_cache_reset(&wc);
}

START_TEST(test_walk_same_as_fresh)
{
    setup();
    uint64_t x = 88172645463325252ull;
    for (int i = 0; i < 4000; i++) {
        x ^= x << 13, x ^= x >> 7, x ^= x << 17;
        level((int)(x % 12), (unsigned)(x >> 20));
    }
}
END_TEST

/* The cache is really used: a mark put on the kept frames' hashes shows up in the hash of the
 * next walk, which differs from the previous one in its innermost frames only. */
START_TEST(test_walk_reuses)
{
    setup();
    level(4, 5);
    for (int k = wc.base; k < HP_WALK_MAX; k++)
        wc.hash[k] ^= 1;
    compare = 0;
    level(4, 4);
    ck_assert_int_eq(cached.n, plain.n);
    ck_assert_uint_ne(cached.hash, plain.hash);
    for (int i = 0; i < plain.n; i++)
        ck_assert(cached.pcs[i] == plain.pcs[i]);
    hp_walk_cache_reset(&wc);
    compare = 1;
    level(4, 5);
}
END_TEST

START_TEST(test_walk_repeats_and_siblings)
{
    setup();
    for (int rep = 0; rep < 3; rep++)
        for (unsigned path = 0; path < 64; path++) {
            level(6, path);
            level(6, path); /* the very same stack again */
            level(6, path ^ 32u); /* differs only at the outermost recursive frame */
        }
}
END_TEST

START_TEST(test_walk_truncated)
{
    setup();
    max_depth = 5;
    for (unsigned path = 0; path < 32; path++) {
        level(10, path);
        ck_assert_int_eq(plain.n, 5);
        ck_assert_int_eq(plain.truncated, 1);
        level(2, path);
    }
    max_depth = 64;
}
END_TEST

/* A walk that joins one which stopped at the depth limit must not come out shorter than the
 * limit: the same recursion, captured one level further out. */
START_TEST(test_walk_truncated_join)
{
    setup();
    max_depth = 5;
    for (unsigned path = 0; path < 16; path++) {
        capture_at = 0;
        level(10, path);
        capture_at = 1;
        level(10, path);
        ck_assert_int_eq(plain.n, 5);
        capture_at = 3;
        level(10, path);
    }
    capture_at = 0;
    max_depth = 64;
}
END_TEST

/* A walk that joins a deeper previous one hands out only its innermost max frames, with the
 * hash of exactly those: the deeper walk's hash chain is cut, not rehashed. The stacks differ
 * near the innermost recursive level only, so the join comes after a few new frames. */
START_TEST(test_walk_cut_to_depth)
{
    setup();
    for (unsigned path = 0; path < 16; path++) {
        max_depth = 64;
        level(10, path);
        ck_assert_int_eq(plain.truncated, 0);
        max_depth = 5;
        level(10, path ^ (1u << 9));
        ck_assert_int_eq(plain.n, 5);
        ck_assert_int_eq(plain.truncated, 1);
        ck_assert_int_lt(wc.base + 5, HP_WALK_MAX); /* the cache holds more than it handed out */
        level(10, path ^ (1u << 8));
        level(10, path);
    }
    max_depth = 64;
}
END_TEST

START_TEST(test_rseq_cpu)
{
    hp_clock_init();
    int same = 0;
    for (int i = 0; i < 100 && !same; i++) {
        int a = sched_getcpu();
        uint32_t b = hp_cpu();
        int c = sched_getcpu();
        same = a == c && (uint32_t)a == b;
    }
    ck_assert_msg(same, "hp_cpu() disagrees with sched_getcpu()");
}
END_TEST

int main(void)
{
    Suite *s = suite_create("cfi");
    TCase *tc = tcase_create("core");
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, test_walk_same_as_fresh);
    tcase_add_test(tc, test_walk_reuses);
    tcase_add_test(tc, test_walk_repeats_and_siblings);
    tcase_add_test(tc, test_walk_truncated);
    tcase_add_test(tc, test_walk_truncated_join);
    tcase_add_test(tc, test_walk_cut_to_depth);
    tcase_add_test(tc, test_rseq_cpu);
    suite_add_tcase(s, tc);
    return hp_unit_run(s);
}
