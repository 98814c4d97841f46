/* Unit tests for the cfi unwinder (shim/unwind/walk.c, sites.c): a walk that reuses the previous walk's frames
 * must give exactly what a walk from scratch gives, with the same hash, on stacks that keep
 * changing under it (the same frames reached from other call sites at the same stack
 * pointers, deeper and shallower stacks, truncation); and the rseq cpu id matches
 * sched_getcpu. */
#include "unit_support.h"

#include "unwind/unwind.h"
#include "unwind/unwind_internal.h" /* the cfi walk itself: hp_cfi_walk, hp_cfi_site_find */
#include "core/core.h"
#include "profile/profile.h"
#include "dump/dump.h"
#include "rt/rt.h"

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
static volatile int times_v; /* loop counts the compiler cannot unroll (see repeat) */
static int max_depth = 64;
static int compare = 1; /* level() checks each capture */

/* With use_sites, capture() asks the site cache first, as an allocation does; a stack gets the
 * id of its hash in ids[] (numbered as they come), and a hit must give the id of the stack
 * walked from scratch. */
static int use_sites;
static uint64_t ids[16384];
static uint32_t nids, site_hits, site_tries;

static uint32_t id_of(uint64_t hash)
{
    for (uint32_t i = 0; i < nids; i++)
        if (ids[i] == hash)
            return i + 1;
    ck_assert_uint_lt(nids, sizeof ids / sizeof ids[0]);
    ids[nids++] = hash;
    return nids;
}

/* Walk from this function's caller twice: with the cache and from scratch. */
static __attribute__((noinline)) void capture(void)
{
    uintptr_t *fp = __builtin_frame_address(0);
    uintptr_t ip = fp[1], sp = (uintptr_t)(fp + 2), bp = fp[0];
    uintptr_t hi = (uintptr_t)__libc_stack_end;
    const uintptr_t *out;
    uintptr_t buf[HP_WALK_MAX];
    uint32_t hit = 0;
    int hit_trunc = 0;
    if (use_sites) {
        site_tries++;
        if (!hp_cfi_site_skip(&wc))
            hit = hp_cfi_site_find(&wc, ip, sp, bp, hi, &hit_trunc);
    }
    cached.truncated = 0;
    if (!hit) {
        cached.n = hp_cfi_walk(ip, sp, bp, hi, buf, max_depth, &cached.truncated, &wc, &out, &cached.hash);
        memcpy(cached.pcs, out, (size_t)cached.n * sizeof *out);
    }
    plain.truncated = 0;
    plain.n = hp_cfi_walk(ip, sp, bp, hi, plain.pcs, max_depth, &plain.truncated, NULL, &out, &plain.hash);
    ck_assert_ptr_eq(out, plain.pcs);
    if (hit) {
        /* What check_same compares: the stack of the id found. */
        site_hits++;
        ck_assert_uint_eq(hit, id_of(plain.hash));
        ck_assert_int_eq(hit_trunc, plain.truncated);
        cached = plain;
    } else if (use_sites) {
        hp_cfi_site_add(&wc, id_of(cached.hash));
    }
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

static void sites_setup(void)
{
    setup();
    hp_walk_cache_forget(&wc);
    nids = site_hits = site_tries = 0;
    use_sites = 1;
}

/* The site cache hands out the context of the stack walked from scratch, every time, while
 * the same innermost frame (level()'s call to capture, at the same stack pointer for the same
 * depth) is reached through other callers further out, and it is used. (Stacks repeat only
 * when level() is called from the same place: each loop below has one call.) */
START_TEST(test_sites_same_as_walk)
{
    sites_setup();
    uint64_t x = 88172645463325252ull;
    for (int i = 0; i < 6000; i++) {
        x ^= x << 13, x ^= x >> 7, x ^= x << 17;
        /* a few stacks most of the time, now and then another one */
        unsigned path = (x >> 40) % 8 ? (unsigned)(x >> 20) & 3u : (unsigned)(x >> 20);
        level(4 + (int)(x % 5), path);
    }
    ck_assert_uint_gt(site_hits, site_tries / 2);
    use_sites = 0;
}
END_TEST

/* Stacks that differ only in their outermost recursive frame, and the same stack again: the
 * entry of one is never taken for the other. */
/* level(depth, path) from one call site, times times (a loop the compiler cannot unroll into
 * several call sites, which would make each call's stack another one). */
static __attribute__((noinline)) void repeat(int times, int depth, unsigned path)
{
    times_v = times;
    for (int i = 0; i < times_v; i++)
        level(depth, path);
}

START_TEST(test_sites_siblings)
{
    sites_setup();
    for (int rep = 0; rep < 3; rep++)
        for (unsigned path = 0; path < 64; path++) {
            repeat(2, 6, path);
            repeat(1, 6, path ^ 32u);
        }
    ck_assert_uint_gt(site_hits, 64);
    use_sites = 0;
}
END_TEST

/* Walks cut at the depth limit (every stack here is deeper than 5): the frames past the limit
 * do not matter, and the flag comes back with the id (capture checks it). */
START_TEST(test_sites_truncated)
{
    sites_setup();
    max_depth = 5;
    for (int rep = 0; rep < 4; rep++)
        for (unsigned path = 0; path < 32; path++) {
            repeat(1, 10, path);
            ck_assert_int_eq(plain.truncated, 1);
            repeat(2, 2, path);
            ck_assert_int_eq(plain.truncated, 1);
        }
    ck_assert_uint_gt(site_hits, 64);
    max_depth = 64;
    use_sites = 0;
}
END_TEST

/* level() and its callers again, without frame pointers (as most of Debian's code is): an
 * entry's checks are then the return addresses alone, one a frame, and the ones that change
 * with the path are every other one. (clang has no attribute for it: there they keep their
 * frame pointers, and the test below covers less.) */
#if defined(__clang__)
#define NOFP __attribute__((noinline))
#else
#define NOFP __attribute__((noinline, optimize("omit-frame-pointer")))
#endif
static NOFP void nofp_level(int depth, unsigned path);

static NOFP void nofp_a(int depth, unsigned path)
{
    nofp_level(depth - 1, path >> 1);
    sink++;
}

static NOFP void nofp_b(int depth, unsigned path)
{
    sink--;
    nofp_level(depth - 1, path >> 1);
    sink++;
}

static NOFP void nofp_level(int depth, unsigned path)
{
    if (depth == 0) {
        capture();
        check_same();
    } else if (path & 1) {
        nofp_a(depth, path);
    } else {
        nofp_b(depth, path);
    }
    sink++;
}

/* Stack p, then stack q, from one call site (paths from a volatile array: with `i ? q : p`
 * gcc peels the first call out of the loop, and the two stacks part at their outermost frame). */
static volatile unsigned pair_paths[2];

static __attribute__((noinline)) void pair(unsigned p, unsigned q)
{
    pair_paths[0] = p;
    pair_paths[1] = q;
    times_v = 2;
    for (int i = 0; i < times_v; i++)
        nofp_level(6, pair_paths[i]);
}

/* Every pair of stacks of one depth, one right after the other: whichever of their slots
 * differ (the path's bits are every other check, so they fall in two of an entry's four
 * chains), the second never gets the first's context (capture checks every hit; a fold that
 * left out a chain fails here). */
START_TEST(test_sites_pairs)
{
    sites_setup();
    for (unsigned p = 0; p < 64; p++)
        for (unsigned q = 0; q < 64; q++)
            pair(p, q);
    ck_assert_uint_ge(site_hits, 64);
    use_sites = 0;
}
END_TEST

/* Walks of one frame (stack_depth=1): entries without a slot to check, taken on the
 * innermost frame alone. */
START_TEST(test_sites_one_frame)
{
    sites_setup();
    max_depth = 1;
    compare = 0; /* check_same wants more than 3 frames */
    repeat(3, 4, 1);
    ck_assert_int_eq(plain.n, 1);
    ck_assert_int_eq(plain.truncated, 1);
    ck_assert_uint_eq(site_hits, 2);
    repeat(2, 5, 2); /* another innermost stack pointer */
    ck_assert_uint_eq(site_hits, 3);
    compare = 1;
    max_depth = 64;
    use_sites = 0;
}
END_TEST

/* A frame with a large alloca between the allocating frame and the outer ones: an entry
 * whose slots lie over 512 KiB up the stack (offsets are kept in 16 bits of 8-byte units) is
 * not kept, and the stack comes out right all the same; one 100 KiB up is kept. */
static __attribute__((noinline)) void big_frame(size_t bytes, int times)
{
    volatile char *buf = __builtin_alloca(bytes);
    buf[0] = 1;
    buf[bytes - 1] = 1;
    repeat(times, 3, 1);
    sink += buf[0] + buf[bytes - 1];
}

/* The entry for the stack capture() walked last, if the cache kept one. */
static const struct hp_site *site_entry(void)
{
    uint32_t id = id_of(plain.hash);
    for (uint64_t st = 0; st <= wc.sites.mask; st++)
        for (int w = 0; w < HP_SITE_WAYS; w++)
            if (wc.sites.tags[st][w].ip && wc.sites.body[st * HP_SITE_WAYS + w].id == id)
                return &wc.sites.body[st * HP_SITE_WAYS + w];
    return NULL;
}

/* Its checks without the padding (copies of check 0 at the end; no other check reads that
 * slot, the first frame's return address). */
static __attribute__((unused)) uint32_t site_checks(const struct hp_site *b) /* (unused under clang) */
{
    uint32_t n = b->n;
    while (n > 1 && b->off[n - 1] == b->off[0])
        n--;
    return n;
}

START_TEST(test_sites_far_slots)
{
    sites_setup();
    big_frame(600u << 10, 3);
    ck_assert_uint_eq(site_hits, 0);
    ck_assert(site_entry() == NULL);
    big_frame(100u << 10, 3);
    ck_assert_uint_eq(site_hits, 2);
    ck_assert(site_entry() != NULL);
    use_sites = 0;
}
END_TEST

/* Code unloaded: what the cache knew is not used any more (the next lookup misses), and it
 * fills again. A recycled walk cache (another thread's) starts empty. */
START_TEST(test_sites_forget)
{
    sites_setup();
    repeat(2, 5, 3);
    ck_assert_uint_eq(site_hits, 1);
    hp_cfi_code_unloaded();
    repeat(2, 5, 3);
    ck_assert_uint_eq(site_hits, 2);
    hp_walk_cache_forget(&wc);
    repeat(2, 5, 3);
    ck_assert_uint_eq(site_hits, 3);
}
END_TEST

/* New stacks (level(14, path) for path from *next on, all under one innermost frame) until
 * the site cache is keyed deep and at its full size; while it rests before that (it does
 * after each of the first two windows at full size), any stack (its lookups are skipped). */
static void sites_fill_deep(unsigned *next)
{
    compare = 0;
    unsigned rests = 0;
    while (!(wc.sites.deep && wc.sites.mask + 1 == HP_SITE_SETS_DEEP_MAX)) {
        if (wc.sites.off) {
            rests++;
            level(3, 0);
            continue;
        }
        ck_assert_uint_lt(*next, 1u << 14);
        level(14, (*next)++);
    }
    ck_assert_uint_gt(rests, 0); /* it rested, and went deep after */
    compare = 1;
}

/* More stacks than the cache holds at first: it grows; a thread whose stacks keep missing has
 * its sets keyed deep, and when they miss all the same it soon stops looking
 * (hp_cfi_site_skip). */
START_TEST(test_sites_grow_and_rest)
{
    sites_setup();
    for (int rep = 0; rep < 12; rep++)
        for (int depth = 3; depth <= 10; depth++)
            for (unsigned path = 0; path < 4; path++)
                level(depth, path);
    ck_assert_uint_gt(wc.sites.mask + 1, HP_SITE_SETS_MIN);
    ck_assert_uint_gt(site_hits, 64);
    ck_assert_uint_eq(wc.sites.deep, 0);
    /* Every stack new from here on. */
    unsigned next = 0;
    sites_fill_deep(&next);
    ck_assert_uint_eq(wc.sites.off, 0); /* not before it was keyed deep and grew */
    compare = 0;
    while (!wc.sites.off) {
        ck_assert_uint_lt(next, 1u << 14);
        level(14, next++);
    }
    compare = 1;
    ck_assert_uint_ne(wc.sites.deep, 0);
    use_sites = 0;
}
END_TEST

/* Keyed deep and at full size, a thread that makes more entries than it gets hits from (more
 * stacks than its sets hold, replacing each other) makes none for the next window, while its
 * lookups go on finding the entries there are: here a third of the lookups are one stack that
 * stays, the rest eight stacks that share one set of four ways (a deep key covers the four
 * return addresses above the innermost frame, here the path's two highest bits of six; these
 * part further out). */
START_TEST(test_sites_no_adds)
{
    sites_setup();
    unsigned next = 0;
    sites_fill_deep(&next);
    ck_assert_uint_eq(wc.sites.off, 0);
    wc.sites.tries = wc.sites.hits = wc.sites.adds = 0; /* a window from here */
    unsigned paused = 0, hits_paused = 0;
    for (unsigned i = 0; i < 2000; i++) {
        uint32_t h = site_hits;
        repeat(1, 4, 0);
        repeat(1, 6, ((i * 2) % 8) << 1);
        repeat(1, 6, ((i * 2 + 1) % 8) << 1);
        if (wc.sites.no_adds) {
            /* (the window may have begun within these three lookups) */
            ck_assert_uint_eq(wc.sites.adds, 0);
            paused++;
            hits_paused += site_hits - h;
        }
    }
    ck_assert_uint_gt(paused, 300);
    ck_assert_uint_gt(hits_paused, 300);
    ck_assert_uint_eq(wc.sites.off, 0); /* a third of hits: it never stopped looking */
    use_sites = 0;
}
END_TEST

/* 256 stacks under one innermost frame and stack pointer, parting in the four return
 * addresses above it (each level one of four functions of the same frame size, chosen by two
 * bits of k): more than the four ways of the set the frame alone chooses can hold. The cache
 * turns deep, and then keeps them all apart (capture checks every hit against a walk). */
static volatile unsigned deep_sink;
typedef void deep_fn(unsigned k);

static NOFP void deep_leaf(void)
{
    capture();
    deep_sink++;
}

#define DEEP_LEVEL(name, next, shift, c)                                                         \
    static NOFP void name(unsigned k)                                                            \
    {                                                                                            \
        next[(k >> (shift)) & 3](k);                                                             \
        deep_sink += (c);                                                                        \
    }

static NOFP void deep_d0(unsigned k) { (void)k; deep_leaf(); deep_sink += 1; }
static NOFP void deep_d1(unsigned k) { (void)k; deep_leaf(); deep_sink += 2; }
static NOFP void deep_d2(unsigned k) { (void)k; deep_leaf(); deep_sink += 3; }
static NOFP void deep_d3(unsigned k) { (void)k; deep_leaf(); deep_sink += 4; }
static deep_fn *volatile deep_d[4] = {deep_d0, deep_d1, deep_d2, deep_d3};
/* Four functions of one level, deep_x0 .. deep_x3, calling into next, and their table deep_x. */
#define DEEP_LEVEL4(x, next, shift, c)                                                           \
    DEEP_LEVEL(deep_##x##0, next, shift, (c))                                                    \
    DEEP_LEVEL(deep_##x##1, next, shift, (c) + 1)                                                \
    DEEP_LEVEL(deep_##x##2, next, shift, (c) + 2)                                                \
    DEEP_LEVEL(deep_##x##3, next, shift, (c) + 3)                                                \
    static deep_fn *volatile deep_##x[4] = {deep_##x##0, deep_##x##1, deep_##x##2, deep_##x##3};

DEEP_LEVEL4(c, deep_d, 6, 5)
DEEP_LEVEL4(b, deep_c, 4, 9)
DEEP_LEVEL4(a, deep_b, 2, 13)

static NOFP void deep_run(unsigned k)
{
    deep_a[k & 3](k);
    deep_sink++;
}

/* 256 stacks as above, deep_run's, at random, until the cache has been keyed deep for 7,000
 * of them: then over 90% of the last 4,000 must hit. */
static void deep_runs(void)
{
    uint64_t x = 88172645463325252ull;
    int deep_at = -1;
    uint32_t hits = 0, tries = 0;
    for (int i = 0; i < 300000 && (deep_at < 0 || i < deep_at + 7000); i++) {
        if (deep_at < 0 && wc.sites.deep)
            deep_at = i;
        if (deep_at >= 0 && i == deep_at + 3000) { /* every stack made an entry by now */
            hits = site_hits;
            tries = site_tries;
        }
        x ^= x << 13, x ^= x >> 7, x ^= x << 17;
        deep_run((unsigned)(x >> 24) & 255u);
        check_same();
    }
    ck_assert_int_ge(deep_at, 0);
    ck_assert_uint_eq(nids, 256);
    ck_assert_uint_gt(site_hits - hits, (site_tries - tries) * 9 / 10);
    ck_assert_uint_eq(wc.sites.off, 0);
}

START_TEST(test_sites_deep)
{
    sites_setup();
    deep_runs();
    ck_assert_uint_eq(wc.sites.deep, HP_SITE_SETS_DEEP_MAX);
    use_sites = 0;
}
END_TEST

/* With over half of the metadata budget spent, a cache keyed deep stays at the size it had,
 * however much it misses: here the budget leaves room for two more 2 MiB chunks of the arena
 * and its reserve, the first of them (where the sets keyed by the frame alone take 280 KiB)
 * puts the arena over half of it, and the second would have room for 1,024 sets. The stacks
 * of deep_run are kept apart all the same; then 3,000 new ones. */
START_TEST(test_sites_deep_budget)
{
    sites_setup();
    hp_meta_init(hp_meta_used() + (4u << 20) + (256u << 10));
    deep_runs();
    ck_assert_uint_gt(hp_meta_used(), hp_meta_budget() / 2);
    ck_assert_uint_eq(wc.sites.deep, HP_SITE_SETS_MAX);
    compare = 0;
    for (unsigned path = 0; path < 3000;) {
        if (wc.sites.off) { /* resting: lookups skipped */
            level(3, 0);
            continue;
        }
        level(14, path++);
    }
    compare = 1;
    ck_assert_uint_eq(wc.sites.mask + 1, HP_SITE_SETS_MAX);
    use_sites = 0;
}
END_TEST

/* Code with frame pointers, and a frame that allocates on its stack (alloca): frames found
 * through rbp. Their entries check the saved rbp each of them used besides the return
 * addresses (more checks than frames), and the same stack comes back as a hit, with its id. */
static volatile unsigned fp_sink;

/* gcc builds these with frame pointers whatever the flags; clang has no such attribute, and
 * only fp_alloca (whose alloca needs a frame base) is found through rbp there. */
#if defined(__clang__)
#define KEEP_FP
#else
#define KEEP_FP __attribute__((optimize("no-omit-frame-pointer")))
#endif

static __attribute__((noinline)) KEEP_FP void fp_leaf(void)
{
    capture();
    fp_sink++;
}

static __attribute__((noinline)) KEEP_FP void fp_alloca(unsigned k)
{
    volatile char *buf = __builtin_alloca(16 * (size_t)k + 16);
    buf[0] = (char)k;
    fp_leaf();
    fp_sink += (unsigned)buf[0];
}

static __attribute__((noinline)) KEEP_FP void fp_outer(unsigned k, int times)
{
    times_v = times;
    for (int i = 0; i < times_v; i++)
        fp_alloca(k);
    fp_sink++;
}

START_TEST(test_sites_frame_pointers)
{
    sites_setup();
    for (unsigned k = 0; k < 8; k++)
        fp_outer(k, 3);
    ck_assert_uint_eq(site_hits, 16);
    /* the entry of the last stack: its checks outnumber its frames' return addresses */
    const struct hp_site *b = site_entry();
    ck_assert_ptr_nonnull(b);
#if !defined(__clang__)
    ck_assert_uint_gt(site_checks(b), (uint32_t)plain.n);
#endif
    use_sites = 0;
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
    tcase_add_test(tc, test_sites_same_as_walk);
    tcase_add_test(tc, test_sites_siblings);
    tcase_add_test(tc, test_sites_pairs);
    tcase_add_test(tc, test_sites_no_adds);
    tcase_add_test(tc, test_sites_deep);
    tcase_add_test(tc, test_sites_deep_budget);
    tcase_add_test(tc, test_sites_truncated);
    tcase_add_test(tc, test_sites_one_frame);
    tcase_add_test(tc, test_sites_far_slots);
    tcase_add_test(tc, test_sites_forget);
    tcase_add_test(tc, test_sites_grow_and_rest);
    tcase_add_test(tc, test_sites_frame_pointers);
    tcase_add_test(tc, test_rseq_cpu);
    suite_add_tcase(s, tc);
    return hp_unit_run(s);
}
