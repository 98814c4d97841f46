/* Unit tests for the access shadow (shim/shadow/): the mapping, granule counts with tail
 * granules, sums, histograms, clearing and giving pages back, against a fake shadow (small
 * mapped planes whose base makes a made-up address range map into them); the reservation and
 * its rendezvous at the fixed place; and, on the shim's real allocation path over libc's
 * allocator, that two blocks never share a counter. */
#include "unit_support.h"

#include "backend/backend.h"
#include "core/core.h"
#include "core/core_internal.h"
#include "core/header_internal.h"
#include "profile/profile.h"
#include "unwind/unwind.h"
#include "rt/rt.h"
#include "shadow/attach.h"
#include "shadow/shadow.h"

#include <malloc.h>
#include <stdint.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/time.h>

/* ---------- the fake shadow ---------- */

/* Addresses the fake planes cover: never dereferenced, only mapped to counters. */
#define HEAP ((uintptr_t)0x40000000)
#define HEAP_SPAN ((size_t)32 << 20)
#define PLANE_BYTES (HEAP_SPAN >> 3)

static struct hp_shadow fake;
static uint64_t *plane0, *plane1;
static uint8_t *plane2; /* words: a byte per 8 bytes, as many bytes as plane 0 */

static uint64_t *map_plane(void)
{
    void *p = mmap(NULL, PLANE_BYTES, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    ck_assert_ptr_ne(p, MAP_FAILED);
    return p;
}

static void setup(void)
{
    plane0 = map_plane();
    plane1 = map_plane();
    plane2 = (uint8_t *)map_plane();
    fake.base = (uintptr_t)plane0 - (HEAP >> 3);
    fake.wbase = 0;
    fake.hbase = 0;
}

static void with_writes(void) { fake.wbase = (uintptr_t)plane1 - (HEAP >> 3); }
static void with_words(void) { fake.hbase = (uintptr_t)plane2 - (HEAP >> 3); }

/* What inline instrumentation does for one access at a: one increment of a's counter. */
static void access_at(uintptr_t a, uint64_t times) { *hp_shadow_ctr(fake.base, a) += times; }
/* What a callback build does for a store: plane 0 and plane 1. */
static void store_at(uintptr_t a)
{
    ++*hp_shadow_ctr(fake.base, a);
    ++*hp_shadow_ctr(fake.wbase, a);
}

static uint64_t plane_sum(const uint64_t *pl)
{
    uint64_t s = 0;
    for (size_t i = 0; i < PLANE_BYTES / 8; i++)
        s += pl[i];
    return s;
}

/* Pages of [p, p + n) resident. */
static size_t resident(const void *p, size_t n)
{
    unsigned char vec[1024];
    size_t pages = n / 4096;
    ck_assert_uint_le(pages, sizeof vec);
    ck_assert_int_eq(mincore((void *)p, n, vec), 0);
    size_t r = 0;
    for (size_t i = 0; i < pages; i++)
        r += vec[i] & 1;
    return r;
}

/* ---------- mapping ---------- */

START_TEST(test_mapping)
{
    /* counter(a) = base + ((a & ~63) >> 3): 64 bytes share a counter, the next 64 the next. */
    ck_assert_ptr_eq(hp_shadow_ctr(fake.base, HEAP), plane0);
    ck_assert_ptr_eq(hp_shadow_ctr(fake.base, HEAP + 63), plane0);
    ck_assert_ptr_eq(hp_shadow_ctr(fake.base, HEAP + 64), plane0 + 1);
    ck_assert_ptr_eq(hp_shadow_ctr(fake.base, HEAP + 130), plane0 + 2);
    ck_assert_ptr_eq(hp_shadow_ctr(0x1000, 0), (uint64_t *)0x1000);
    ck_assert_ptr_eq(hp_shadow_ctr(0x1000, 64 * 5 + 7), (uint64_t *)(0x1000 + 40));
    /* The whole 47-bit space fits one 16 TiB plane. */
    ck_assert_uint_eq((uintptr_t)hp_shadow_ctr(0, ((uintptr_t)1 << 47) - 1) + 8, HP_SHADOW_PLANE_SIZE);
    /* The same as clang 14's inline code: (a >> 6) * 8 + base. */
    for (uintptr_t a = HEAP; a < HEAP + 1000; a += 7)
        ck_assert_uint_eq((uintptr_t)hp_shadow_ctr(fake.base, a), fake.base + (a >> 6) * 8);
}
END_TEST

START_TEST(test_granules)
{
    ck_assert_uint_eq(hp_shadow_granules(HEAP, 0), 0);
    ck_assert_uint_eq(hp_shadow_granules(HEAP, 1), 1);
    ck_assert_uint_eq(hp_shadow_granules(HEAP, 64), 1);
    ck_assert_uint_eq(hp_shadow_granules(HEAP, 65), 2);
    ck_assert_uint_eq(hp_shadow_granules(HEAP + 32, 32), 1);
    ck_assert_uint_eq(hp_shadow_granules(HEAP + 32, 33), 2); /* a 32-aligned block spills over */
    ck_assert_uint_eq(hp_shadow_granules(HEAP + 32, 64), 2);
    ck_assert_uint_eq(hp_shadow_granules(HEAP + 32, 100), 3); /* bytes 0..31, 32..95, 96..99 */
    ck_assert_uint_eq(hp_shadow_granules(HEAP, 100), 2);
    ck_assert_uint_eq(hp_shadow_granules(HEAP + 63, 2), 2);
    ck_assert_uint_eq(hp_shadow_granules(HEAP, (size_t)1 << 20), 16384);
}
END_TEST

/* ---------- sums ---------- */

START_TEST(test_every_8th_byte)
{
    /* 256 bytes written at every 8th byte, 5 times: 32 accesses per round in 4 granules. */
    uintptr_t p = HEAP + 64 * 10;
    for (int r = 0; r < 5; r++)
        for (uintptr_t a = p; a < p + 256; a += 8)
            access_at(a, 1);
    struct hp_shadow_sum s;
    uint64_t hist[8] = {0};
    hp_shadow_take(&fake, p, 256, &s, hist, 8);
    ck_assert_uint_eq(s.accesses, 160);
    ck_assert_uint_eq(s.granules, 4);
    ck_assert_uint_eq(s.touched, 4);
    ck_assert_uint_eq(hp_shadow_util_pct(&s), 100);
    ck_assert_uint_eq(s.writes, 0);
    for (int i = 0; i < 4; i++)
        ck_assert_uint_eq(hist[i], 40);
    ck_assert_uint_eq(hist[4], 0);
    ck_assert_uint_eq(plane_sum(plane0), 0); /* taken: cleared */
}
END_TEST

START_TEST(test_tail_granule)
{
    /* 100 bytes at a user pointer 32 mod 64: granule 0 = header + bytes 0..31, granule 1 =
     * bytes 32..95, granule 2 = bytes 96..99 (the tail). */
    uintptr_t p = HEAP + 64 * 3 + 32;
    access_at(p + 99, 1);
    access_at(p + 96, 2);
    access_at(p, 1);
    struct hp_shadow_sum s;
    uint64_t hist[4] = {0};
    hp_shadow_take(&fake, p, 100, &s, hist, 4);
    ck_assert_uint_eq(s.granules, 3);
    ck_assert_uint_eq(s.touched, 2);
    ck_assert_uint_eq(s.accesses, 4);
    ck_assert_uint_eq(hp_shadow_util_pct(&s), 66);
    ck_assert_uint_eq(hist[0], 1);
    ck_assert_uint_eq(hist[1], 0);
    ck_assert_uint_eq(hist[2], 3);
    ck_assert_uint_eq(hist[3], 0);
    /* The same into a histogram of the caller's own, threads or not: its bins set, not added
     * to. */
    access_at(p + 99, 1);
    access_at(p + 96, 2);
    access_at(p, 1);
    hp_shadow_hist_shared = 1;
    uint64_t own[3] = {9, 9, 9};
    hp_shadow_take_own(&fake, p, 100, &s, own, 3);
    hp_shadow_hist_shared = 0;
    ck_assert_uint_eq(s.accesses, 4);
    ck_assert_uint_eq(own[0], 1);
    ck_assert_uint_eq(own[1], 0);
    ck_assert_uint_eq(own[2], 3);
    ck_assert_uint_eq(plane_sum(plane0), 0);
}
END_TEST

START_TEST(test_not_multiple_of_64)
{
    /* 200 bytes at a 64-aligned pointer: 4 granules, the last holding bytes 192..199. */
    uintptr_t p = HEAP + 4096;
    for (uintptr_t a = p; a < p + 200; a += 8)
        access_at(a, 1);
    struct hp_shadow_sum s;
    hp_shadow_take(&fake, p, 200, &s, NULL, 0);
    ck_assert_uint_eq(s.accesses, 25);
    ck_assert_uint_eq(s.granules, 4);
    ck_assert_uint_eq(s.touched, 4);
}
END_TEST

START_TEST(test_half_used_and_untouched)
{
    uintptr_t p = HEAP + 8192, q = p + 1024 + 32;
    for (uintptr_t a = p; a < p + 256; a += 8)
        access_at(a, 1);
    struct hp_shadow_sum s;
    hp_shadow_take(&fake, p, 512, &s, NULL, 0);
    ck_assert_uint_eq(s.accesses, 32);
    ck_assert_uint_eq(s.touched, 4);
    ck_assert_uint_eq(s.granules, 8);
    ck_assert_uint_eq(hp_shadow_util_pct(&s), 50);
    hp_shadow_take(&fake, q, 512, &s, NULL, 0);
    ck_assert_uint_eq(s.accesses, 0);
    ck_assert_uint_eq(s.touched, 0);
    ck_assert_uint_eq(s.granules, 9);
    ck_assert_uint_eq(hp_shadow_util_pct(&s), 0);
    hp_shadow_take(&fake, q, 0, &s, NULL, 0);
    ck_assert_uint_eq(s.granules, 0);
    ck_assert_uint_eq(hp_shadow_util_pct(&s), 0);
}
END_TEST

START_TEST(test_peek_keeps_counts)
{
    uintptr_t p = HEAP + 64;
    access_at(p, 7);
    access_at(p + 64, 3);
    struct hp_shadow_sum s, t;
    uint64_t h1[2] = {0}, h2[2] = {0};
    hp_shadow_peek(&fake, p, 128, &s, h1, 2);
    hp_shadow_take(&fake, p, 128, &t, h2, 2);
    ck_assert_uint_eq(s.accesses, 10);
    ck_assert_uint_eq(t.accesses, 10);
    ck_assert_uint_eq(s.touched, t.touched);
    ck_assert_uint_eq(h1[0], 7);
    ck_assert_uint_eq(h2[1], 3);
    hp_shadow_take(&fake, p, 128, &t, NULL, 0);
    ck_assert_uint_eq(t.accesses, 0);
}
END_TEST

START_TEST(test_hist_bound)
{
    /* A block of 10 granules with room for 4 buckets: the first 4 are filled, the rest is
     * still summed. */
    uintptr_t p = HEAP + 64 * 100;
    for (int g = 0; g < 10; g++)
        access_at(p + 64 * (uintptr_t)g, (uint64_t)g + 1);
    uint64_t hist[5] = {0};
    struct hp_shadow_sum s;
    hp_shadow_take(&fake, p, 640, &s, hist, 4);
    ck_assert_uint_eq(s.accesses, 55);
    ck_assert_uint_eq(hist[0], 1);
    ck_assert_uint_eq(hist[3], 4);
    ck_assert_uint_eq(hist[4], 0); /* past the bound: untouched */
}
END_TEST

START_TEST(test_clear_only_the_block)
{
    uintptr_t p = HEAP + 64 * 200 + 32;
    for (uintptr_t a = p - 64; a < p + 300; a += 8)
        access_at(a, 1);
    /* Granules of [p, p+100): the ones at p-32, p+32, p+96. The one before is a neighbour's. */
    hp_shadow_clear(&fake, p, 100);
    ck_assert_uint_eq(*hp_shadow_ctr(fake.base, p - 33), 4); /* p-64 .. p-40 */
    ck_assert_uint_eq(*hp_shadow_ctr(fake.base, p), 0);
    ck_assert_uint_eq(*hp_shadow_ctr(fake.base, p + 99), 0);
    ck_assert_uint_ne(*hp_shadow_ctr(fake.base, p + 160), 0);
    hp_shadow_clear(&fake, p, 0); /* no granules: nothing */
    ck_assert_uint_eq(*hp_shadow_ctr(fake.base, p - 33), 4);
}
END_TEST

START_TEST(test_no_shadow_no_work)
{
    struct hp_shadow none = {0, 0, 0};
    struct hp_shadow_sum s;
    hp_shadow_take(&none, HEAP, 640, &s, NULL, 0);
    ck_assert_uint_eq(s.accesses, 0);
    ck_assert_uint_eq(s.granules, 10);
    hp_shadow_clear(&none, HEAP, 640);
    hp_shadow_release(&none, HEAP, 1 << 20);
}
END_TEST

/* ---------- reads and writes apart ---------- */

START_TEST(test_writes_plane)
{
    with_writes();
    uintptr_t p = HEAP + 64 * 50;
    for (uintptr_t a = p; a < p + 128; a += 8)
        store_at(a); /* 16 stores */
    for (int r = 0; r < 3; r++)
        for (uintptr_t a = p; a < p + 128; a += 8)
            access_at(a, 1); /* 48 loads: plane 0 only */
    struct hp_shadow_sum s;
    hp_shadow_take(&fake, p, 128, &s, NULL, 0);
    ck_assert_uint_eq(s.accesses, 64);
    ck_assert_uint_eq(s.writes, 16);
    ck_assert_uint_eq(s.accesses - s.writes, 48); /* reads */
    ck_assert_uint_eq(plane_sum(plane0), 0);
    ck_assert_uint_eq(plane_sum(plane1), 0);
    store_at(p);
    hp_shadow_clear(&fake, p, 8);
    ck_assert_uint_eq(plane_sum(plane1), 0);
}
END_TEST

/* ---------- large blocks: pages given back ---------- */

START_TEST(test_large_take_gives_pages_back)
{
    with_writes();
    /* 4 MiB of heap at a 32-mod-64 pointer: 512 KiB of counters, 128 pages. */
    size_t size = (size_t)4 << 20;
    uintptr_t p = HEAP + 64 * 64 + 32;
    uint64_t n = hp_shadow_granules(p, size);
    for (uint64_t g = 0; g < n; g += 3)
        access_at(p + 64 * g, 2);
    store_at(p + size - 1);
    access_at(p - 64, 5);      /* a neighbour before */
    access_at(p + size + 64, 9); /* and after */
    ck_assert_uint_gt(resident(plane0, PLANE_BYTES), 100);
    struct hp_shadow_sum s;
    uint64_t hist[16] = {0};
    hp_shadow_take(&fake, p, size, &s, hist, 16);
    ck_assert_uint_eq(s.granules, n);
    ck_assert_uint_eq(s.touched, (n + 2) / 3 + ((n - 1) % 3 != 0));
    ck_assert_uint_eq(s.accesses, 2 * ((n + 2) / 3) + 1);
    ck_assert_uint_eq(s.writes, 1);
    ck_assert_uint_eq(hist[0], 2);
    ck_assert_uint_eq(hist[1], 0);
    ck_assert_uint_eq(hist[3], 2);
    /* (mincore first: reading a page maps the zero page, which it counts as resident) */
    ck_assert_uint_le(resident(plane0, PLANE_BYTES), 3); /* head, tail pages */
    ck_assert_uint_le(resident(plane1, PLANE_BYTES), 2);
    ck_assert_uint_eq(plane_sum(plane0), 5 + 9); /* the neighbours' counts only */
}
END_TEST

START_TEST(test_large_clear_and_release)
{
    size_t size = (size_t)2 << 20; /* 256 KiB of counters */
    uintptr_t p = HEAP + ((size_t)8 << 20);
    for (uintptr_t a = p - 64; a < p + size + 64; a += 64)
        access_at(a, 1);
    hp_shadow_clear(&fake, p, size);
    ck_assert_uint_eq(resident((char *)plane0 + (1 << 20), 256 << 10), 0);
    ck_assert_uint_eq(plane_sum(plane0), 2);
    /* release: whole pages only. For [p + 640, p + size - 640) the first and the last page of
     * the block's counters reach outside that range, so they keep their counts. */
    for (uintptr_t a = p - 64; a < p + size + 64; a += 64)
        access_at(a, 1);
    hp_shadow_release(&fake, p + 640, size - 1280);
    /* the neighbours (2 each), the first page's 512 counters and the last page's 512. */
    ck_assert_uint_eq(plane_sum(plane0), 2 * 2 + 512 + 512);
    ck_assert_uint_eq(*hp_shadow_ctr(fake.base, p - 64), 2);
    ck_assert_uint_eq(*hp_shadow_ctr(fake.base, p + 639), 1);
    ck_assert_uint_eq(*hp_shadow_ctr(fake.base, p + 4096 * 8), 0);
}
END_TEST

/* ---------- the word plane ---------- */

static uint64_t words_sum(void)
{
    uint64_t s = 0;
    for (size_t i = 0; i < PLANE_BYTES; i++)
        s += plane2[i];
    return s;
}

START_TEST(test_word_mapping)
{
    with_words();
    /* word(a) = hbase + (a >> 3): 8 bytes share a counter, one byte each. */
    ck_assert_ptr_eq(hp_shadow_word(fake.hbase, HEAP), plane2);
    ck_assert_ptr_eq(hp_shadow_word(fake.hbase, HEAP + 7), plane2);
    ck_assert_ptr_eq(hp_shadow_word(fake.hbase, HEAP + 8), plane2 + 1);
    ck_assert_ptr_eq(hp_shadow_word(fake.hbase, HEAP + 64 * 3 + 33), plane2 + 28);
    /* The 47-bit space fits a 16 TiB plane too. */
    ck_assert_uint_eq((uintptr_t)hp_shadow_word(0, ((uintptr_t)1 << 47) - 1) + 1, HP_SHADOW_PLANE_SIZE);
    ck_assert_uint_eq(hp_shadow_words(0), 0);
    ck_assert_uint_eq(hp_shadow_words(1), 1);
    ck_assert_uint_eq(hp_shadow_words(8), 1);
    ck_assert_uint_eq(hp_shadow_words(9), 2);
    ck_assert_uint_eq(hp_shadow_words(48), 6);
    ck_assert_uint_eq(HP_WORD_MAX, 255);
}
END_TEST

/* What a callback does for one access at a (instrument.h, hp_rt_count): plane 0, and plane 2
 * when the old counter says the granule is armed. */
static void cb_access(const struct hp_shadow *sh, uintptr_t a)
{
    uint64_t *c = hp_shadow_ctr(sh->base, a), old = *c;
    *c = old + 1;
    if (old & HP_SHADOW_ARMED)
        hp_shadow_word_bump(sh->hbase, a);
}

/* A block's words armed, counted, saturated and taken: the fields of a struct. */
START_TEST(test_word_counts)
{
    with_words();
    uintptr_t p = HEAP + 64 * 3 + 32; /* a 32-aligned user pointer */
    size_t size = 44;                 /* 6 words, the last one partly; granules 3 and 4 */
    /* Not armed: an access counts in plane 0 only. */
    cb_access(&fake, p);
    ck_assert_uint_eq(words_sum(), 0);
    hp_shadow_clear(&fake, p, size);
    hp_shadow_word_arm(&fake, p, size);
    ck_assert_uint_eq(*hp_shadow_ctr(fake.base, p), HP_SHADOW_ARMED);
    ck_assert_uint_eq(*hp_shadow_ctr(fake.base, p + 43), HP_SHADOW_ARMED);
    ck_assert_uint_eq(*hp_shadow_ctr(fake.base, p - 33), 0); /* neighbours not armed */
    ck_assert_uint_eq(*hp_shadow_ctr(fake.base, p + 96), 0);
    ck_assert_uint_eq(words_sum(), 0);
    for (int i = 0; i < 3; i++)
        cb_access(&fake, p + 3);  /* word 0: any byte of it */
    for (int i = 0; i < 300; i++)
        cb_access(&fake, p + 16); /* word 2: past the counter's top */
    cb_access(&fake, p + 43);     /* word 5: the last, partial one */
    cb_access(&fake, p + 96);     /* the next block's granule: not armed */
    ck_assert_uint_eq(*hp_shadow_word(fake.hbase, p + 16), HP_WORD_MAX);
    ck_assert_uint_eq(*hp_shadow_word(fake.hbase, p + 96), 0);
    uint64_t bins[8] = {0}, sat[8] = {0}, peek[8] = {0}, psat[8] = {0};
    /* A dump's peek adds the same, and leaves the words with their counts. */
    hp_shadow_word_peek(&fake, p, size, peek, psat, 8);
    hp_shadow_word_peek(&fake, p, size, peek, NULL, 8);
    ck_assert_uint_eq(peek[0], 6);
    ck_assert_uint_eq(peek[2], 2 * HP_WORD_MAX);
    ck_assert_uint_eq(psat[2], 1);
    hp_shadow_word_take(&fake, p, size, bins, sat, 8);
    uint64_t want[8] = {3, 0, HP_WORD_MAX, 0, 0, 1, 0, 0}, wsat[8] = {0, 0, 1, 0, 0, 0, 0, 0};
    for (int i = 0; i < 8; i++) {
        ck_assert_uint_eq(bins[i], want[i]);
        ck_assert_uint_eq(sat[i], wsat[i]);
    }
    ck_assert_uint_eq(words_sum(), 0);
    /* The granule counters' sums leave the arming out, and their clearing disarms. */
    struct hp_shadow_sum s;
    hp_shadow_take(&fake, p, size, &s, NULL, 0);
    ck_assert_uint_eq(s.accesses, 304);
    ck_assert_uint_eq(s.granules, 2);
    ck_assert_uint_eq(s.touched, 2);
    ck_assert_uint_eq(*hp_shadow_ctr(fake.base, p), 0);
    /* An armed block nobody touched: granules armed, no access, none touched. */
    hp_shadow_word_arm(&fake, p, size);
    hp_shadow_peek(&fake, p, size, &s, bins, 8);
    ck_assert_uint_eq(s.accesses, 0);
    ck_assert_uint_eq(s.touched, 0);
    ck_assert_uint_eq(bins[0], 3); /* the histogram got nothing either */
    /* A take adds to what the bins hold (a context's blocks summed); a shorter histogram gets
     * its first words, the rest go back to 0 all the same. */
    cb_access(&fake, p);
    cb_access(&fake, p + 40);
    hp_shadow_word_take(&fake, p, size, bins, sat, 2);
    ck_assert_uint_eq(bins[0], 4);
    ck_assert_uint_eq(bins[5], 1);
    ck_assert_uint_eq(words_sum(), 0);
    hp_shadow_take(&fake, p, size, &s, NULL, 0);
    /* A block never armed (made before plane 2 existed): nothing known, nothing added. */
    cb_access(&fake, p);
    hp_shadow_word_take(&fake, p, size, bins, sat, 8);
    ck_assert_uint_eq(bins[0], 4);
}
END_TEST

/* Arming covers exactly the block's granules and zeroes exactly its words, whatever its size
 * and start. */
START_TEST(test_word_arm_exact)
{
    with_words();
    for (uintptr_t off = 0; off < 64; off += 32)
        for (size_t size = 1; size <= 130; size++) {
            uintptr_t p = HEAP + 4096 + off;
            uint64_t n = hp_shadow_words(size), g = hp_shadow_granules(p, size);
            uint8_t *w = hp_shadow_word(fake.hbase, p);
            memset(w - 1, 7, n + 2); /* stale counts, and the neighbours' */
            hp_shadow_word_arm(&fake, p, size);
            ck_assert_uint_eq(words_sum(), 14);
            ck_assert_uint_eq(w[-1], 7);
            ck_assert_uint_eq(w[n], 7);
            uint64_t *c = hp_shadow_ctr(fake.base, p);
            for (uint64_t i = 0; i < g; i++)
                ck_assert_uint_eq(c[i], HP_SHADOW_ARMED);
            ck_assert_uint_eq(c[-1], 0);
            ck_assert_uint_eq(c[g], 0);
            w[-1] = w[n] = 0;
            hp_shadow_clear(&fake, p, size);
            ck_assert_uint_eq(plane_sum(plane0), 0);
        }
}
END_TEST

/* Without plane 2 (inline builds, word histograms off) the word functions do nothing. */
START_TEST(test_word_no_plane)
{
    uint64_t bins[4] = {0};
    hp_shadow_word_arm(&fake, HEAP, 32);
    hp_shadow_word_take(&fake, HEAP, 32, bins, NULL, 4);
    hp_shadow_word_peek(&fake, HEAP, 32, bins, NULL, 4);
    ck_assert_uint_eq(words_sum(), 0);
    ck_assert_uint_eq(bins[0], 0);
}
END_TEST

/* ---------- reservation ---------- */

START_TEST(test_reserve_and_rendezvous)
{
    struct hp_shadow a = {0, 0, 0}, b = {0, 0, 0};
    ck_assert_int_eq(hp_shadow_reserve(&a, 0), 0);
    ck_assert_uint_ne(a.base, 0);
    ck_assert_uint_eq(a.wbase, 0);
    /* The fixed place is free in a test process: taken there. */
    ck_assert_uint_eq(a.base, HP_SHADOW_FIXED_BASE);
    /* A counter of a real heap address works and costs no more than its page. */
    char *heap = malloc(1000);
    ++*hp_shadow_ctr(a.base, (uintptr_t)heap);
    ck_assert_uint_eq(*hp_shadow_ctr(a.base, (uintptr_t)heap), 1);
    /* A second copy finds the same shadow (another runtime, or the shim) ... */
    ck_assert_int_eq(hp_shadow_reserve(&b, 0), 0);
    ck_assert_uint_eq(b.base, a.base);
    /* ... and a writes plane reserved by one is found by the other. */
    ck_assert_int_eq(hp_shadow_reserve(&a, 1), 0);
    ck_assert_uint_eq(a.wbase, HP_SHADOW_FIXED_BASE + HP_SHADOW_PLANE_SIZE);
    struct hp_shadow c = {0, 0, 0};
    ck_assert_int_eq(hp_shadow_reserve(&c, 1), 0);
    ck_assert_uint_eq(c.wbase, a.wbase);
    ck_assert_int_eq(hp_shadow_reserve(&b, 1), 0);
    ck_assert_uint_eq(b.wbase, a.wbase);
    free(heap);
}
END_TEST

START_TEST(test_reserve_when_fixed_place_taken)
{
    /* Something else lives at the fixed place: the shadow goes elsewhere. */
    void *m = mmap((void *)HP_SHADOW_FIXED_BASE, 4096, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS |
                   MAP_FIXED_NOREPLACE, -1, 0);
    ck_assert_ptr_eq(m, (void *)HP_SHADOW_FIXED_BASE);
    struct hp_shadow a = {0, 0, 0};
    ck_assert_int_eq(hp_shadow_reserve(&a, 1), 0);
    ck_assert_uint_ne(a.base, 0);
    ck_assert_uint_ne(a.base, HP_SHADOW_FIXED_BASE);
    ck_assert_uint_ne(a.wbase, 0);
    ++*hp_shadow_ctr(a.wbase, (uintptr_t)&a);
    /* Unreadable there (PROT_NONE): not taken for a shadow either. */
    munmap(m, 4096);
    m = mmap((void *)HP_SHADOW_FIXED_BASE, 4096, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS |
             MAP_FIXED_NOREPLACE, -1, 0);
    ck_assert_ptr_eq(m, (void *)HP_SHADOW_FIXED_BASE);
    struct hp_shadow b = {0, 0, 0};
    ck_assert_int_eq(hp_shadow_reserve(&b, 0), 0);
    ck_assert_uint_ne(b.base, HP_SHADOW_FIXED_BASE);
}
END_TEST

/* Plane 2 for callback modules when word histograms are on; a runtime of the first struct
 * layout is still taken, without it. */
START_TEST(test_attach_words)
{
    hp_shadow_word_max = 256;
    struct hp_attach in = {HP_ATTACH_VERSION, sizeof in, HP_MODE_INLINE, 1, &in, 0, 0, 0};
    ck_assert_int_eq(hp_shadow_attach(&in), 0);
    ck_assert_uint_eq(in.hbase, 0); /* inline code cannot count per word */
    ck_assert_uint_eq(hp_shadow.hbase, 0);
    struct hp_attach old = {HP_ATTACH_VERSION, HP_ATTACH_SIZE_V1, HP_MODE_CALLBACKS, 1, &old, 0, 0,
                            0x1234};
    ck_assert_int_eq(hp_shadow_attach(&old), 0);
    ck_assert_uint_ne(old.wbase, 0);
    ck_assert_uint_eq(old.hbase, 0x1234); /* not written: past the caller's struct */
    ck_assert_uint_eq(hp_shadow.hbase, 0);
    struct hp_attach cb = {HP_ATTACH_VERSION, sizeof cb, HP_MODE_GCC, 0, &cb, 0, 0, 0};
    ck_assert_int_eq(hp_shadow_attach(&cb), 0);
    ck_assert_uint_eq(cb.hbase, HP_SHADOW_FIXED_BASE + 2 * HP_SHADOW_PLANE_SIZE);
    ck_assert_uint_eq(hp_shadow.hbase, cb.hbase);
    /* Another copy of the shadow code finds plane 2 at the fixed place's marker. */
    struct hp_shadow other = {0, 0, 0};
    ck_assert_int_eq(hp_shadow_reserve(&other, 0), 0);
    ck_assert_uint_eq(other.hbase, cb.hbase);
    ++*hp_shadow_word(cb.hbase, (uintptr_t)&cb);
}
END_TEST

START_TEST(test_attach_words_off)
{
    hp_shadow_word_max = 0;
    struct hp_attach cb = {HP_ATTACH_VERSION, sizeof cb, HP_MODE_CALLBACKS, 1, &cb, 0, 0, 0};
    ck_assert_int_eq(hp_shadow_attach(&cb), 0);
    ck_assert_uint_ne(cb.wbase, 0);
    ck_assert_uint_eq(cb.hbase, 0);
}
END_TEST

START_TEST(test_attach)
{
    struct hp_attach a = {HP_ATTACH_VERSION, sizeof a, HP_MODE_INLINE, 1, &a, 0, 0, 0};
    ck_assert(!hp_shadow_on());
    ck_assert_int_eq(hp_shadow_attach(&a), 0);
    ck_assert(hp_shadow_on());
    ck_assert_uint_eq(a.base, hp_shadow.base);
    ck_assert_uint_eq(a.wbase, 0);
    struct hp_attach b = {HP_ATTACH_VERSION, sizeof b, HP_MODE_CALLBACKS, 1, &b, 0, 0, 0};
    ck_assert_int_eq(hp_shadow_attach(&b), 0);
    ck_assert_uint_eq(b.base, a.base);
    ck_assert_uint_ne(b.wbase, 0);
    ck_assert_uint_eq(hp_shadow.wbase, b.wbase);
    /* The runtime attaching for itself names no module. */
    struct hp_attach rt = {HP_ATTACH_VERSION, sizeof rt, HP_MODE_NONE, 1, NULL, 0, 0, 0};
    ck_assert_int_eq(hp_shadow_attach(&rt), 0);
    /* A module attaching twice is one entry, with both modes. */
    struct hp_attach again = {HP_ATTACH_VERSION, sizeof again, HP_MODE_ABI_UNKNOWN, 1, &a, 0, 0, 0};
    ck_assert_int_eq(hp_shadow_attach(&again), 0);
    struct hp_attach bad = {HP_ATTACH_VERSION + 1, sizeof bad, HP_MODE_INLINE, 1, &bad, 0, 0, 0};
    ck_assert_int_eq(hp_shadow_attach(&bad), -1);
    bad.version = HP_ATTACH_VERSION;
    bad.size = 8;
    ck_assert_int_eq(hp_shadow_attach(&bad), -1);
    ck_assert_uint_eq(hp_shadow_modes, HP_MODE_INLINE | HP_MODE_CALLBACKS | HP_MODE_ABI_UNKNOWN);
    struct hp_shadow_module m[4];
    ck_assert_uint_eq(hp_shadow_modules(m, 4), 2);
    ck_assert_uint_eq(m[0].addr, (uintptr_t)&a);
    ck_assert_uint_eq(m[0].mode, HP_MODE_INLINE | HP_MODE_ABI_UNKNOWN);
    ck_assert_uint_eq(m[1].addr, (uintptr_t)&b);
    ck_assert_uint_eq(m[1].mode, HP_MODE_CALLBACKS);
    ck_assert_uint_eq(hp_shadow_modules(m, 1), 1);
    /* access=0: refused, nothing noted. */
    hp_shadow_refuse = 1;
    struct hp_attach c = {HP_ATTACH_VERSION, sizeof c, HP_MODE_GCC, 0, &c, 0, 0, 0};
    ck_assert_int_eq(hp_shadow_attach(&c), -1);
    ck_assert_uint_eq(hp_shadow_modules(m, 4), 2);
    ck_assert_uint_eq(hp_shadow_modes & HP_MODE_GCC, 0);
}
END_TEST

/* ---------- two blocks never share a counter: the shim's real allocation path ---------- */

static void libc_backend(void)
{
    memset(&hp_be, 0, sizeof hp_be);
    hp_be.name = "libc";
    hp_be.malloc = malloc;
    hp_be.free = free;
    hp_be.calloc = calloc;
    hp_be.realloc = realloc;
    hp_be.memalign = memalign;
    hp_be.usable_size = malloc_usable_size;
    hp_options_parse(&hp_opt, "output=:verbosity=0");
    hp_init_state = HP_INIT_DONE;
    hp_profiling = 0;
    hp_passthrough = 0;
    hp_secret = 0x243f6a8885a308d3ull;
}

struct blk {
    uintptr_t user, size;
};

static int by_user(const void *a, const void *b)
{
    uintptr_t x = ((const struct blk *)a)->user, y = ((const struct blk *)b)->user;
    return x < y ? -1 : x > y;
}

/* The argument of shadow.h, checked on every block: the first granule starts at the header
 * or the user pointer, inside the block's own raw block; sorted by address, each block's last
 * granule (and its usable tail's) lies before the next block's first. */
static void check_disjoint(struct blk *b, int n)
{
    qsort(b, (size_t)n, sizeof *b, by_user);
    for (int i = 0; i < n; i++) {
        void *u = (void *)b[i].user;
        uintptr_t first = b[i].user & ~(uintptr_t)63;
        ck_assert_uint_eq(b[i].user % HP_MIN_ALIGN, 0);
        ck_assert_uint_ge(first, b[i].user - HP_HEADER_SIZE);
        ck_assert_uint_ge(first, (uintptr_t)hp_hdr_raw(u, hp_hdr(u)));
        if (i + 1 == n || b[i].size == 0)
            continue;
        uintptr_t last = (b[i].user + b[i].size - 1) & ~(uintptr_t)63;
        uintptr_t usable_last = (b[i].user + hp_usable_size(u) - 1) & ~(uintptr_t)63;
        uintptr_t next_first = b[i + 1].user & ~(uintptr_t)63;
        ck_assert_uint_lt(last, next_first);
        ck_assert_uint_lt(usable_last, next_first);
        ck_assert_ptr_ne(hp_shadow_ctr(0, b[i].user + b[i].size - 1), hp_shadow_ctr(0, b[i + 1].user));
    }
}

START_TEST(test_blocks_never_share_a_counter)
{
    libc_backend();
    enum { N = 3000 };
    static struct blk b[N];
    int n = 0;
    /* Plain blocks of every size up to 300 (user pointers 0 or 32 mod 64, as glibc places
     * them), aligned ones of 64 .. 8192 (page-start blocks among them), mimalloc-style offset
     * blocks, and blocks moved by realloc. */
    for (size_t s = 0; s < 300; s++) {
        b[n].size = s;
        b[n++].user = (uintptr_t)hp_alloc(s, 0, s & 1);
    }
    for (size_t al = 64; al <= 8192; al *= 2)
        for (size_t s = 1; s < 5000; s += 331) {
            b[n].size = s;
            b[n++].user = (uintptr_t)hp_alloc(s, al, 0);
        }
    int page_starts = 0;
    for (int i = 0; i < n; i++)
        page_starts += (b[i].user & 4095) == 0;
    ck_assert_int_gt(page_starts, 10);
    for (size_t s = 1; s < 2000; s += 97) {
        b[n].size = s;
        b[n++].user = (uintptr_t)hp_alloc_from(NULL, NULL, s, 128, 32, 0);
    }
    for (int i = 0; i < 100; i++) {
        b[n].size = 100 + (size_t)i * 40;
        b[n].user = (uintptr_t)hp_alloc(10, 0, 0);
        b[n].user = (uintptr_t)hp_realloc((void *)b[n].user, b[n].size);
        n++;
    }
    int odd = 0;
    for (int i = 0; i < n; i++) {
        ck_assert_uint_ne(b[i].user, 0);
        odd += (b[i].user & 63) == 32;
    }
    ck_assert_int_gt(odd, 50); /* the half-granule case is exercised */
    check_disjoint(b, n);
    for (int i = 0; i < n; i++)
        hp_free((void *)b[i].user);
}
END_TEST

/* ---------- the shim's allocation paths with a real shadow ---------- */

static uint64_t real_sum(const void *p, size_t n)
{
    uint64_t s = 0;
    for (uint64_t i = 0; i < hp_shadow_granules((uintptr_t)p, n); i++)
        s += hp_shadow_ctr(hp_shadow.base, (uintptr_t)p)[i];
    return s;
}

static void real_touch(const void *p, size_t n, uint64_t v)
{
    for (uint64_t i = 0; i < hp_shadow_granules((uintptr_t)p, n); i++)
        hp_shadow_ctr(hp_shadow.base, (uintptr_t)p)[i] += v;
}

/* Counters are cleared when a block is made (counts left at its address by accesses after a
 * free must not become the new block's) and taken when it goes away, on every path. */
START_TEST(test_paths_clear_and_take)
{
    libc_backend();
    /* The profiler on (the shadow is only ever on with it): blocks get contexts. */
    hp_clock_init();
    hp_meta_init(64u << 20);
    hp_stack_init();
    hp_profile_init(NULL);
    ck_assert_int_eq(hp_profiling, 1);
    void *p = hp_alloc(256, 0, 0); /* shadow off: no shadow work (there is no shadow) */
    ck_assert(!hp_shadow_on());
    hp_free(p);
    struct hp_attach a = {HP_ATTACH_VERSION, sizeof a, HP_MODE_INLINE, 1, &a, 0, 0, 0};
    ck_assert_int_eq(hp_access_attach(&a), 0);
    ck_assert(hp_shadow_on());
    ck_assert_int_eq(hp_word_hists_on, 0); /* inline: no word plane, states without room */
    /* Plain, aligned (page starts among them), mimalloc-style offset blocks, operator new. */
    void *blocks[64];
    size_t sizes[64];
    int n = 0;
    for (size_t sz = 1; sz < 3000; sz += 377) {
        sizes[n] = sz, blocks[n++] = hp_alloc(sz, 0, 0);
        sizes[n] = sz, blocks[n++] = hp_alloc(sz, 4096, 0);
        sizes[n] = sz, blocks[n++] = hp_alloc_from(NULL, NULL, sz, 128, 32, 0);
        sizes[n] = sz, blocks[n++] = hp_new(sz, 0, 0);
    }
    for (int i = 0; i < n; i++) {
        ck_assert_uint_eq(real_sum(blocks[i], sizes[i]), 0);
        real_touch(blocks[i], sizes[i], 3);
    }
    for (int i = 0; i < n; i++) {
        ck_assert_uint_ne(real_sum(blocks[i], sizes[i]), 0);
        hp_free(blocks[i]);
        ck_assert_uint_eq(real_sum(blocks[i], sizes[i]), 0); /* taken */
    }
    /* An access after the free, then a new block at the address: it starts at 0. */
    p = hp_alloc(200, 0, 0);
    hp_free(p);
    real_touch(p, 200, 5);
    void *q = hp_alloc(200, 0, 0);
    ck_assert_ptr_eq(q, p); /* glibc's tcache hands the block back */
    ck_assert_uint_eq(real_sum(q, 200), 0);
    /* realloc: the old block taken before the backend's realloc, the new one cleared. */
    real_touch(q, 200, 1);
    void *r = hp_realloc(q, 100000);
    ck_assert_ptr_nonnull(r);
    ck_assert_uint_eq(real_sum(q, 200), 0);
    ck_assert_uint_eq(real_sum(r, 100000), 0);
    /* A large block's shadow pages are given back at its free. */
    size_t big = 8u << 20;
    char *b = hp_alloc(big, 0, 0);
    real_touch(b, big, 1);
    ck_assert_uint_gt(resident((void *)(((uintptr_t)hp_shadow_ctr(hp_shadow.base, (uintptr_t)b) + 8191) & ~(uintptr_t)4095), 64 * 4096), 60);
    hp_free(b);
    ck_assert_uint_eq(resident((void *)(((uintptr_t)hp_shadow_ctr(hp_shadow.base, (uintptr_t)b) + 8191) & ~(uintptr_t)4095), 64 * 4096), 0);
    hp_free(r);
}
END_TEST

/* Callback builds: the allocation paths arm small blocks' words, and a free adds them to the
 * context's per-word histogram and disarms them; larger blocks are never armed. */
START_TEST(test_paths_words)
{
    libc_backend();
    hp_clock_init();
    hp_meta_init(64u << 20);
    hp_stack_init();
    hp_profile_init(NULL);
    ck_assert_uint_eq(hp_word_bins, 32); /* access_word_hist_max=256 by default */
    hp_shadow_word_max = 256;
    struct hp_attach a = {HP_ATTACH_VERSION, sizeof a, HP_MODE_CALLBACKS, 1, &a, 0, 0, 0};
    ck_assert_int_eq(hp_access_attach(&a), 0);
    ck_assert_uint_ne(hp_shadow.hbase, 0);
    ck_assert_int_eq(hp_word_hists_on, 1);
    uint64_t *small[3];
    for (int i = 0; i < 3; i++) {
        small[i] = hp_alloc(40, 0, 0); /* one context: the same call site */
        ck_assert(*hp_shadow_ctr(hp_shadow.base, (uintptr_t)small[i]) & HP_SHADOW_ARMED);
        ck_assert(*hp_shadow_ctr(hp_shadow.base, (uintptr_t)&small[i][4]) & HP_SHADOW_ARMED);
    }
    char *big = hp_alloc(257, 0, 0);
    ck_assert_uint_eq(*hp_shadow_ctr(hp_shadow.base, (uintptr_t)big), 0);
    uint32_t ctx = hp_hdr(small[0])->context_id;
    ck_assert_uint_ne(ctx, 0);
    for (int i = 0; i < 3; i++) {
        ck_assert_uint_eq(hp_hdr(small[i])->context_id, ctx);
        cb_access(&hp_shadow, (uintptr_t)&small[i][1]);
        for (int k = 0; k < 260; k++)
            cb_access(&hp_shadow, (uintptr_t)&small[i][4] + 3);
    }
    cb_access(&hp_shadow, (uintptr_t)big);
    ck_assert_uint_eq(*hp_shadow_word(hp_shadow.hbase, (uintptr_t)big), 0);
    ck_assert_uint_eq(*hp_shadow_ctr(hp_shadow.base, (uintptr_t)big), 1);
    hp_free(small[0]);
    hp_free(small[1]);
    /* realloc takes the old block's words as a free does. */
    void *r = hp_realloc(small[2], 4000);
    ck_assert_ptr_nonnull(r);
    struct hp_word_hist w = hp_hist_words(hp_profile_hists(ctx));
    uint64_t want[6] = {0, 3, 0, 0, 3 * HP_WORD_MAX, 0};
    for (int i = 0; i < 6; i++)
        ck_assert_uint_eq(w.freed[i], want[i]);
    ck_assert_uint_eq(w.freed_sat[4], 3);
    ck_assert_uint_eq(w.freed_sat[1], 0);
    /* The freed blocks' granules: disarmed with their counters. */
    ck_assert_uint_eq(*hp_shadow_ctr(hp_shadow.base, (uintptr_t)small[0]), 0);
    hp_free(big);
    hp_free(r);
}
END_TEST

/* access=0: modules are refused and the paths do no shadow work. */
START_TEST(test_access_off)
{
    libc_backend();
    hp_options_parse(&hp_opt, "output=:verbosity=0:access=0");
    hp_access_init();
    struct hp_attach a = {HP_ATTACH_VERSION, sizeof a, HP_MODE_INLINE, 1, &a, 0, 0, 0};
    ck_assert_int_eq(hp_access_attach(&a), -1);
    ck_assert(!hp_shadow_on());
    void *p = hp_alloc(64, 0, 0);
    hp_free(p);
}
END_TEST

/* ---------- the registry of live blocks ---------- */

#define NREG 20000
struct walk {
    int n;
    uint64_t sum_size, sum_ctx;
    uintptr_t first;
};

static void walk_fn(uintptr_t user, uint64_t size, uint32_t ctx, void *arg)
{
    struct walk *w = arg;
    w->n++;
    w->sum_size += size;
    w->sum_ctx += ctx;
    ck_assert_uint_eq(size, (user >> 5) % 1000); /* what the test stored for it */
    ck_assert_uint_eq(ctx, (uint32_t)(user >> 5) % 7 + 1);
}

static uint32_t reg_add(uintptr_t u)
{
    return hp_shadow_live_add(u, (u >> 5) % 1000, (uint32_t)(u >> 5) % 7 + 1);
}

START_TEST(test_live_registry)
{
    hp_options_parse(&hp_opt, "verbosity=0");
    static uint32_t ref[NREG + 1];
    uint64_t size = 0, ctxs = 0;
    ck_assert_uint_eq(hp_shadow_live_bytes(), 0);
    for (uintptr_t i = 1; i <= NREG; i++) {
        ref[i] = reg_add(HEAP + i * 32);
        ck_assert_uint_ne(ref[i], 0);
    }
    uint64_t bytes = hp_shadow_live_bytes();
    ck_assert_uint_ge(bytes, NREG * 16);
    ck_assert_uint_le(bytes, (NREG + 64) * 16);
    for (uintptr_t i = 1; i <= NREG; i++) {
        uintptr_t u = HEAP + i * 32;
        if (i % 3 == 0) {
            hp_shadow_live_del(ref[i], u);
        } else {
            size += (u >> 5) % 1000;
            ctxs += (u >> 5) % 7 + 1;
        }
    }
    hp_shadow_live_del(ref[1], HEAP + 2 * 32); /* another block's reference: nothing */
    hp_shadow_live_del(0, HEAP + 32);          /* not registered: nothing */
    hp_shadow_live_del(ref[3], HEAP + 3 * 32); /* gone already: nothing */
    struct walk w = {0, 0, 0, 0};
    hp_shadow_live_foreach(walk_fn, &w);
    ck_assert_int_eq(w.n, NREG - NREG / 3);
    ck_assert_uint_eq(w.sum_size, size);
    ck_assert_uint_eq(w.sum_ctx, ctxs);
    /* Slots given back are taken again: the registry does not grow. */
    for (uintptr_t i = 3; i <= NREG; i += 3)
        ref[i] = reg_add(HEAP + i * 32);
    ck_assert_uint_eq(hp_shadow_live_bytes(), bytes);
    for (uintptr_t i = 1; i <= NREG; i++)
        hp_shadow_live_del(ref[i], HEAP + i * 32);
    w = (struct walk){0, 0, 0, 0};
    hp_shadow_live_foreach(walk_fn, &w);
    ck_assert_int_eq(w.n, 0);
    ck_assert_uint_eq(hp_shadow_live_dropped(), 0);
}
END_TEST

/* A slot packs the pointer, size and context in 16 bytes: the extremes come back whole. */
static void extreme_fn(uintptr_t user, uint64_t size, uint32_t ctx, void *arg)
{
    int *seen = arg;
    if (user == ((uintptr_t)1 << 47) - 32) {
        ck_assert_uint_eq(size, ((uint64_t)1 << 47) - 1);
        ck_assert_uint_eq(ctx, UINT32_MAX - 1);
        seen[0]++;
    } else {
        ck_assert_uint_eq(user, 32);
        ck_assert_uint_eq(size, ((uint64_t)1 << 22) + 1);
        ck_assert_uint_eq(ctx, 1u << 22);
        seen[1]++;
    }
}

START_TEST(test_live_registry_extremes)
{
    ck_assert_uint_ne(hp_shadow_live_add(((uintptr_t)1 << 47) - 32, ((uint64_t)1 << 47) - 1,
                                         UINT32_MAX - 1), 0);
    ck_assert_uint_ne(hp_shadow_live_add(32, ((uint64_t)1 << 22) + 1, 1u << 22), 0);
    int seen[2] = {0, 0};
    hp_shadow_live_foreach(extreme_fn, seen);
    ck_assert_int_eq(seen[0], 1);
    ck_assert_int_eq(seen[1], 1);
}
END_TEST

/* Signal handlers that register and remove blocks while their thread is in the middle of its
 * own operations (a timer every 50 microseconds): no deadlock, nothing lost or left over. */
#define HANDLER_BASE (HEAP + ((uintptr_t)1 << 24))
static volatile uint64_t handler_ops;

static void registering_handler(int sig)
{
    (void)sig;
    uintptr_t u = HANDLER_BASE + (handler_ops % 1000) * 32;
    uint32_t r = reg_add(u);
    ck_assert_uint_ne(r, 0);
    hp_shadow_live_del(r, u);
    handler_ops++;
}

START_TEST(test_live_registry_signals)
{
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = registering_handler;
    sigaction(SIGALRM, &sa, NULL);
    struct itimerval it = {{0, 50}, {0, 50}};
    setitimer(ITIMER_REAL, &it, NULL);
    static uint32_t ref[1000];
    for (int round = 0; round < 400 || handler_ops < 50; round++) {
        for (uintptr_t i = 0; i < 1000; i++)
            ref[i] = reg_add(HEAP + i * 32);
        for (uintptr_t i = 0; i < 1000; i++)
            if (i % 10)
                hp_shadow_live_del(ref[i], HEAP + i * 32);
        for (uintptr_t i = 0; i < 1000; i += 10)
            hp_shadow_live_del(ref[i], HEAP + i * 32);
    }
    struct itimerval off = {{0, 0}, {0, 0}};
    setitimer(ITIMER_REAL, &off, NULL);
    ck_assert_uint_gt(handler_ops, 0);
    struct walk w = {0, 0, 0, 0};
    hp_shadow_live_foreach(walk_fn, &w);
    ck_assert_int_eq(w.n, 0);
    ck_assert_uint_eq(hp_shadow_live_dropped(), 0);
}
END_TEST

/* Threads that end give their slots back (hp_shadow_live_thread_exit, which the profiler calls
 * as a thread ends), and a thread that frees what another registers does not make the array
 * grow: 1,000 threads one after another, then a producer and a consumer 50 rounds over. */
struct pc {
    uintptr_t base;
    uint32_t ref[1000];
};

static void *reg_thread(void *arg)
{
    struct pc *p = arg;
    for (uintptr_t i = 0; i < 100; i++)
        p->ref[i] = reg_add(p->base + i * 32);
    for (uintptr_t i = 0; i < 100; i++)
        hp_shadow_live_del(p->ref[i], p->base + i * 32);
    hp_shadow_live_thread_exit();
    return NULL;
}

/* One producer and one consumer, both alive all along (each with its own list, unless their
 * addresses pick the same one), 50 rounds in turns. */
static pthread_barrier_t turn;

static void *producer(void *arg)
{
    struct pc *p = arg;
    for (int round = 0; round < 50; round++) {
        for (uintptr_t i = 0; i < 1000; i++)
            p->ref[i] = reg_add(p->base + i * 32);
        pthread_barrier_wait(&turn);
        pthread_barrier_wait(&turn);
    }
    hp_shadow_live_thread_exit();
    return NULL;
}

static void *consumer(void *arg)
{
    struct pc *p = arg;
    for (int round = 0; round < 50; round++) {
        pthread_barrier_wait(&turn);
        for (uintptr_t i = 0; i < 1000; i++)
            hp_shadow_live_del(p->ref[i], p->base + i * 32);
        pthread_barrier_wait(&turn);
    }
    hp_shadow_live_thread_exit();
    return NULL;
}

START_TEST(test_live_registry_threads)
{
    static struct pc p = {HEAP + ((uintptr_t)1 << 26), {0}};
    pthread_t t;
    uint64_t before = hp_shadow_live_bytes();
    for (int k = 0; k < 1000; k++) {
        ck_assert_int_eq(pthread_create(&t, NULL, reg_thread, &p), 0);
        pthread_join(t, NULL);
    }
    /* Without giving back at exit, each thread would keep 36 to 64 slots. */
    ck_assert_uint_le(hp_shadow_live_bytes() - before, 64 * 64 * 16);
    before = hp_shadow_live_bytes();
    pthread_barrier_init(&turn, NULL, 2);
    pthread_t pt, ct;
    ck_assert_int_eq(pthread_create(&pt, NULL, producer, &p), 0);
    ck_assert_int_eq(pthread_create(&ct, NULL, consumer, &p), 0);
    pthread_join(pt, NULL);
    pthread_join(ct, NULL);
    pthread_barrier_destroy(&turn);
    /* The consumer's slots are taken again (not 50 rounds of fresh ones). */
    ck_assert_uint_le(hp_shadow_live_bytes() - before, 3 * 1000 * 16 + 64 * 64 * 16);
    struct walk w = {0, 0, 0, 0};
    hp_shadow_live_foreach(walk_fn, &w);
    ck_assert_int_eq(w.n, 0);
    ck_assert_uint_eq(hp_shadow_live_dropped(), 0);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("shadow");
    TCase *tc = tcase_create("fake shadow");
    tcase_add_checked_fixture(tc, setup, NULL);
    tcase_add_test(tc, test_mapping);
    tcase_add_test(tc, test_granules);
    tcase_add_test(tc, test_every_8th_byte);
    tcase_add_test(tc, test_tail_granule);
    tcase_add_test(tc, test_not_multiple_of_64);
    tcase_add_test(tc, test_half_used_and_untouched);
    tcase_add_test(tc, test_peek_keeps_counts);
    tcase_add_test(tc, test_hist_bound);
    tcase_add_test(tc, test_clear_only_the_block);
    tcase_add_test(tc, test_no_shadow_no_work);
    tcase_add_test(tc, test_writes_plane);
    tcase_add_test(tc, test_large_take_gives_pages_back);
    tcase_add_test(tc, test_large_clear_and_release);
    tcase_add_test(tc, test_word_mapping);
    tcase_add_test(tc, test_word_counts);
    tcase_add_test(tc, test_word_arm_exact);
    tcase_add_test(tc, test_word_no_plane);
    suite_add_tcase(s, tc);
    TCase *tr = tcase_create("reservation");
    tcase_add_test(tr, test_reserve_and_rendezvous);
    tcase_add_test(tr, test_reserve_when_fixed_place_taken);
    tcase_add_test(tr, test_attach);
    tcase_add_test(tr, test_attach_words);
    tcase_add_test(tr, test_attach_words_off);
    suite_add_tcase(s, tr);
    TCase *tg = tcase_create("registry");
    tcase_add_test(tg, test_live_registry);
    tcase_add_test(tg, test_live_registry_signals);
    tcase_add_test(tg, test_live_registry_extremes);
    tcase_add_test(tg, test_live_registry_threads);
    suite_add_tcase(s, tg);
    TCase *tl = tcase_create("layout");
    tcase_add_test(tl, test_blocks_never_share_a_counter);
    tcase_add_test(tl, test_paths_clear_and_take);
    tcase_add_test(tl, test_access_off);
    tcase_add_test(tl, test_paths_words);
    suite_add_tcase(s, tl);
    return hp_unit_run(s);
}
