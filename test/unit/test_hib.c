/* Unit tests for HIB arithmetic (shim/hib.c): adding block events and merging partial HIBs. */
#include "unit_support.h"

#include "format/format.h"

#include <stdint.h>

static struct hp_block_event ev(uint64_t size, uint32_t a_ms, uint32_t d_ms, uint32_t a_cpu,
                                uint32_t d_cpu)
{
    struct hp_block_event e = {size, a_ms, d_ms, a_cpu, d_cpu, 0, 0, 0};
    return e;
}

static struct hpf_hib empty(uint32_t ctx)
{
    struct hpf_hib h;
    memset(&h, 0, sizeof h);
    h.context_id = ctx;
    return h;
}

START_TEST(test_single_event)
{
    struct hpf_hib h = empty(77);
    struct hp_block_event e = ev(100, 10, 30, 3, 3);
    e.access_count = 9;
    e.percent_utilized = 40;
    hp_hib_add(&h, &e);
    ck_assert_uint_eq(h.context_id, 77); /* left alone */
    ck_assert_uint_eq(h.flags, 0);
    ck_assert_uint_eq(h.alloc_count, 1);
    ck_assert_uint_eq(h.total_size, 100);
    ck_assert_uint_eq(h.min_size, 100);
    ck_assert_uint_eq(h.max_size, 100);
    ck_assert_uint_eq(h.total_lifetime_ms, 20);
    ck_assert_uint_eq(h.min_lifetime_ms, 20);
    ck_assert_uint_eq(h.max_lifetime_ms, 20);
    ck_assert_uint_eq(h.total_access_count, 9);
    ck_assert_uint_eq(h.min_access_count, 9);
    ck_assert_uint_eq(h.max_access_count, 9);
    ck_assert_uint_eq(h.total_percent_utilized, 40);
    ck_assert_uint_eq(h.min_percent_utilized, 40);
    ck_assert_uint_eq(h.max_percent_utilized, 40);
    ck_assert_uint_eq(h.alloc_timestamp_ms, 10);
    ck_assert_uint_eq(h.dealloc_timestamp_ms, 30);
    ck_assert_uint_eq(h.alloc_cpu_id, 3);
    ck_assert_uint_eq(h.dealloc_cpu_id, 3);
    ck_assert_uint_eq(h.num_migrated_cpu, 0);
    ck_assert_uint_eq(h.num_lifetime_overlaps, 0);
    ck_assert_uint_eq(h.num_same_alloc_cpu, 0);
    ck_assert_uint_eq(h.num_same_dealloc_cpu, 0);
}
END_TEST

START_TEST(test_first_event_migrated)
{
    struct hpf_hib h = empty(1);
    struct hp_block_event e = ev(8, 0, 5, 0, 1);
    hp_hib_add(&h, &e);
    ck_assert_uint_eq(h.num_migrated_cpu, 1);
}
END_TEST

START_TEST(test_three_events)
{
    struct hpf_hib h = empty(5);
    struct hp_block_event e1 = ev(100, 10, 30, 1, 1);
    struct hp_block_event e2 = ev(50, 20, 40, 1, 2);  /* allocated before e1 was freed */
    struct hp_block_event e3 = ev(300, 45, 50, 2, 2); /* after e2 was freed */
    e1.access_count = 5, e2.access_count = 1, e3.access_count = 7;
    e1.percent_utilized = 50, e2.percent_utilized = 100, e3.percent_utilized = 10;
    hp_hib_add(&h, &e1);
    hp_hib_add(&h, &e2);

    ck_assert_uint_eq(h.alloc_count, 2);
    ck_assert_uint_eq(h.total_size, 150);
    ck_assert_uint_eq(h.min_size, 50);
    ck_assert_uint_eq(h.max_size, 100);
    ck_assert_uint_eq(h.num_migrated_cpu, 1);
    ck_assert_uint_eq(h.num_lifetime_overlaps, 1);
    ck_assert_uint_eq(h.num_same_alloc_cpu, 1);   /* 1 == previous alloc cpu 1 */
    ck_assert_uint_eq(h.num_same_dealloc_cpu, 0); /* 2 != previous dealloc cpu 1 */

    hp_hib_add(&h, &e3);
    ck_assert_uint_eq(h.context_id, 5);
    ck_assert_uint_eq(h.alloc_count, 3);
    ck_assert_uint_eq(h.total_size, 450);
    ck_assert_uint_eq(h.min_size, 50);
    ck_assert_uint_eq(h.max_size, 300);
    ck_assert_uint_eq(h.total_lifetime_ms, 20 + 20 + 5);
    ck_assert_uint_eq(h.min_lifetime_ms, 5);
    ck_assert_uint_eq(h.max_lifetime_ms, 20);
    ck_assert_uint_eq(h.total_access_count, 13);
    ck_assert_uint_eq(h.min_access_count, 1);
    ck_assert_uint_eq(h.max_access_count, 7);
    ck_assert_uint_eq(h.total_percent_utilized, 160);
    ck_assert_uint_eq(h.min_percent_utilized, 10);
    ck_assert_uint_eq(h.max_percent_utilized, 100);
    ck_assert_uint_eq(h.alloc_timestamp_ms, 45);
    ck_assert_uint_eq(h.dealloc_timestamp_ms, 50);
    ck_assert_uint_eq(h.alloc_cpu_id, 2);
    ck_assert_uint_eq(h.dealloc_cpu_id, 2);
    ck_assert_uint_eq(h.num_migrated_cpu, 1);
    ck_assert_uint_eq(h.num_lifetime_overlaps, 1); /* 45 >= 40: no new overlap */
    ck_assert_uint_eq(h.num_same_alloc_cpu, 1);    /* 2 != 1 */
    ck_assert_uint_eq(h.num_same_dealloc_cpu, 1);  /* 2 == 2 */
}
END_TEST

/* Writes are a part of the accesses, kept as their own total, minimum and maximum. */
START_TEST(test_write_counts)
{
    struct hpf_hib h = empty(3);
    struct hp_block_event e1 = ev(64, 0, 1, 0, 0), e2 = ev(64, 1, 2, 0, 0), e3 = ev(64, 2, 3, 0, 0);
    e1.access_count = 10, e1.write_count = 4;
    e2.access_count = 3, e2.write_count = 3;
    e3.access_count = 100, e3.write_count = 0;
    hp_hib_add(&h, &e1);
    ck_assert_uint_eq(h.min_write_count, 4);
    ck_assert_uint_eq(h.max_write_count, 4);
    hp_hib_add(&h, &e2);
    hp_hib_add(&h, &e3);
    ck_assert_uint_eq(h.total_access_count, 113);
    ck_assert_uint_eq(h.total_write_count, 7);
    ck_assert_uint_eq(h.min_write_count, 0);
    ck_assert_uint_eq(h.max_write_count, 4);
    /* The extremes are per field: the block with most writes is not the one with most
     * accesses. */
    ck_assert_uint_eq(h.max_access_count, 100);
    ck_assert_uint_eq(h.min_access_count, 3);
}
END_TEST

START_TEST(test_overlap_boundary)
{
    struct hpf_hib h = empty(1);
    struct hp_block_event a = ev(1, 0, 100, 0, 0);
    struct hp_block_event b = ev(1, 100, 150, 0, 0); /* allocated the ms the other was freed */
    struct hp_block_event c = ev(1, 149, 200, 0, 0); /* 149 < 150 */
    struct hp_block_event d = ev(1, 0, 300, 0, 0);   /* long-lived, freed last */
    hp_hib_add(&h, &a);
    hp_hib_add(&h, &b);
    ck_assert_uint_eq(h.num_lifetime_overlaps, 0);
    hp_hib_add(&h, &c);
    ck_assert_uint_eq(h.num_lifetime_overlaps, 1);
    hp_hib_add(&h, &d);
    ck_assert_uint_eq(h.num_lifetime_overlaps, 2);
    ck_assert_uint_eq(h.num_same_alloc_cpu, 3);
    ck_assert_uint_eq(h.num_same_dealloc_cpu, 3);
    ck_assert_uint_eq(h.num_migrated_cpu, 0);
    ck_assert_uint_eq(h.max_lifetime_ms, 300);
    ck_assert_uint_eq(h.min_lifetime_ms, 50);
}
END_TEST

START_TEST(test_clock_wrap)
{
    struct hpf_hib h = empty(1);
    struct hp_block_event e = ev(64, 0xfffffff0u, 0x10u, 0, 0);
    hp_hib_add(&h, &e);
    ck_assert_uint_eq(h.total_lifetime_ms, 0x20);
    ck_assert_uint_eq(h.min_lifetime_ms, 0x20);
    ck_assert_uint_eq(h.max_lifetime_ms, 0x20);
    struct hp_block_event f = ev(64, 0xffffffffu, 0xffffffffu, 0, 0); /* zero lifetime */
    hp_hib_add(&h, &f);
    ck_assert_uint_eq(h.min_lifetime_ms, 0);
    ck_assert_uint_eq(h.max_lifetime_ms, 0x20);
    ck_assert_uint_eq(h.total_lifetime_ms, 0x20);
    struct hp_block_event g = ev(64, 1, 0, 0, 0); /* almost a full clock period */
    hp_hib_add(&h, &g);
    ck_assert_uint_eq(h.max_lifetime_ms, 0xffffffffu);
    ck_assert_uint_eq(h.total_lifetime_ms, 0x20 + 0xffffffffull);
}
END_TEST

START_TEST(test_large_values)
{
    struct hpf_hib h = empty(1);
    struct hp_block_event e = ev((1ull << 47) - 1, 0, 1, 0xffff, 0xfffe);
    for (int i = 0; i < 4; i++)
        hp_hib_add(&h, &e);
    ck_assert_uint_eq(h.total_size, 4 * ((1ull << 47) - 1)); /* 64-bit sums, no 32-bit wrap */
    ck_assert_uint_eq(h.num_migrated_cpu, 4);
    ck_assert_uint_eq(h.num_same_alloc_cpu, 3);
    ck_assert_uint_eq(h.alloc_cpu_id, 0xffff);
}
END_TEST

/* ---------- merge ---------- */

static struct hpf_hib from_events(uint32_t ctx, const struct hp_block_event *e, int n)
{
    struct hpf_hib h = empty(ctx);
    for (int i = 0; i < n; i++)
        hp_hib_add(&h, &e[i]);
    return h;
}

/* size, alloc/dealloc ms, alloc/dealloc cpu, accesses, utilisation, writes */
static const struct hp_block_event A[] = {
    {100, 0, 10, 0, 0, 3, 20, 1}, {200, 5, 12, 0, 1, 4, 30, 4}, {10, 11, 13, 1, 1, 0, 90, 0}};
static const struct hp_block_event B[] = {
    {1000, 14, 20, 2, 2, 10, 5, 7}, {1, 15, 22, 2, 3, 1, 100, 1}};
static const struct hp_block_event C[] = {
    {7, 30, 31, 3, 3, 2, 50, 2}, {5000, 2, 40, 0, 3, 99, 1, 50}, {64, 39, 45, 3, 0, 8, 64, 3}};

/* Fields that are sums or extremes: merging must agree with adding every event to one HIB. */
static void assert_sums_extremes(const struct hpf_hib *x, const struct hpf_hib *y)
{
    ck_assert_uint_eq(x->alloc_count, y->alloc_count);
    ck_assert_uint_eq(x->total_size, y->total_size);
    ck_assert_uint_eq(x->min_size, y->min_size);
    ck_assert_uint_eq(x->max_size, y->max_size);
    ck_assert_uint_eq(x->total_lifetime_ms, y->total_lifetime_ms);
    ck_assert_uint_eq(x->min_lifetime_ms, y->min_lifetime_ms);
    ck_assert_uint_eq(x->max_lifetime_ms, y->max_lifetime_ms);
    ck_assert_uint_eq(x->total_access_count, y->total_access_count);
    ck_assert_uint_eq(x->min_access_count, y->min_access_count);
    ck_assert_uint_eq(x->max_access_count, y->max_access_count);
    ck_assert_uint_eq(x->total_write_count, y->total_write_count);
    ck_assert_uint_eq(x->min_write_count, y->min_write_count);
    ck_assert_uint_eq(x->max_write_count, y->max_write_count);
    ck_assert_uint_eq(x->total_percent_utilized, y->total_percent_utilized);
    ck_assert_uint_eq(x->min_percent_utilized, y->min_percent_utilized);
    ck_assert_uint_eq(x->max_percent_utilized, y->max_percent_utilized);
    ck_assert_uint_eq(x->num_migrated_cpu, y->num_migrated_cpu);
}

START_TEST(test_merge_matches_sequential)
{
    struct hpf_hib all = empty(9);
    for (int i = 0; i < 3; i++)
        hp_hib_add(&all, &A[i]);
    for (int i = 0; i < 2; i++)
        hp_hib_add(&all, &B[i]);
    for (int i = 0; i < 3; i++)
        hp_hib_add(&all, &C[i]);
    struct hpf_hib a = from_events(9, A, 3), b = from_events(9, B, 2), c = from_events(9, C, 3);
    hp_hib_merge(&a, &b);
    hp_hib_merge(&a, &c);
    assert_sums_extremes(&a, &all);
    ck_assert_uint_eq(a.alloc_count, 8);
    ck_assert_uint_eq(a.total_size, 100 + 200 + 10 + 1000 + 1 + 7 + 5000 + 64);
    ck_assert_uint_eq(a.min_size, 1);
    ck_assert_uint_eq(a.max_size, 5000);
    ck_assert_uint_eq(a.max_lifetime_ms, 38);
    ck_assert_uint_eq(a.min_lifetime_ms, 1);
    ck_assert_uint_eq(a.num_migrated_cpu, 4);
    /* The "last block" fields come from the HIB with the latest deallocation. */
    ck_assert_uint_eq(a.alloc_timestamp_ms, 39);
    ck_assert_uint_eq(a.dealloc_timestamp_ms, 45);
    ck_assert_uint_eq(a.alloc_cpu_id, 3);
    ck_assert_uint_eq(a.dealloc_cpu_id, 0);
    /* Pairwise counters add up (those across the HIB boundary are not known to a merge). */
    struct hpf_hib a1 = from_events(9, A, 3), b1 = from_events(9, B, 2), c1 = from_events(9, C, 3);
    ck_assert_uint_eq(a.num_lifetime_overlaps,
                      a1.num_lifetime_overlaps + b1.num_lifetime_overlaps + c1.num_lifetime_overlaps);
    ck_assert_uint_eq(a.num_same_alloc_cpu,
                      a1.num_same_alloc_cpu + b1.num_same_alloc_cpu + c1.num_same_alloc_cpu);
    ck_assert_uint_eq(a.num_same_dealloc_cpu,
                      a1.num_same_dealloc_cpu + b1.num_same_dealloc_cpu + c1.num_same_dealloc_cpu);
    ck_assert_uint_eq(a.context_id, 9);
}
END_TEST

START_TEST(test_merge_associative)
{
    struct hpf_hib l = from_events(4, A, 3), lb = from_events(4, B, 2), lc = from_events(4, C, 3);
    hp_hib_merge(&l, &lb);
    hp_hib_merge(&l, &lc); /* (A+B)+C */
    struct hpf_hib r = from_events(4, A, 3), rb = from_events(4, B, 2), rc = from_events(4, C, 3);
    hp_hib_merge(&rb, &rc);
    hp_hib_merge(&r, &rb); /* A+(B+C) */
    assert_sums_extremes(&l, &r);
    ck_assert_uint_eq(l.num_lifetime_overlaps, r.num_lifetime_overlaps);
    ck_assert_uint_eq(l.num_same_alloc_cpu, r.num_same_alloc_cpu);
    ck_assert_uint_eq(l.num_same_dealloc_cpu, r.num_same_dealloc_cpu);
    ck_assert_uint_eq(l.alloc_timestamp_ms, r.alloc_timestamp_ms);
    ck_assert_uint_eq(l.dealloc_timestamp_ms, r.dealloc_timestamp_ms);
    ck_assert_uint_eq(l.alloc_cpu_id, r.alloc_cpu_id);
    ck_assert_uint_eq(l.dealloc_cpu_id, r.dealloc_cpu_id);
    ck_assert_int_eq(memcmp(&l, &r, sizeof l), 0);
}
END_TEST

START_TEST(test_merge_older_keeps_last)
{
    /* Merging a HIB whose last free is older keeps dst's "last block" fields. */
    struct hpf_hib c = from_events(2, C, 3), a = from_events(2, A, 3);
    hp_hib_merge(&c, &a);
    ck_assert_uint_eq(c.alloc_timestamp_ms, 39);
    ck_assert_uint_eq(c.dealloc_timestamp_ms, 45);
    ck_assert_uint_eq(c.alloc_cpu_id, 3);
    ck_assert_uint_eq(c.dealloc_cpu_id, 0);
    ck_assert_uint_eq(c.alloc_count, 6);
    ck_assert_uint_eq(c.min_size, 7);
}
END_TEST

START_TEST(test_merge_into_empty)
{
    struct hpf_hib src = from_events(3, B, 2);
    src.flags = 1;
    struct hpf_hib dst = empty(42);
    dst.flags = 2;
    hp_hib_merge(&dst, &src);
    ck_assert_uint_eq(dst.context_id, 42);
    ck_assert_uint_eq(dst.flags, 2);
    struct hpf_hib want = src;
    want.context_id = 42;
    want.flags = 2;
    ck_assert_int_eq(memcmp(&dst, &want, sizeof dst), 0);
    ck_assert_uint_eq(dst.alloc_count, 2);
    ck_assert_uint_eq(dst.min_size, 1);
    ck_assert_uint_eq(dst.max_size, 1000);
}
END_TEST

START_TEST(test_merge_empty)
{
    struct hpf_hib dst = from_events(3, A, 3);
    struct hpf_hib before = dst;
    struct hpf_hib src = empty(3);
    /* An empty HIB carries nothing, whatever stale values its other fields hold. */
    src.min_size = 0;
    src.max_lifetime_ms = 12345;
    src.dealloc_timestamp_ms = 999;
    hp_hib_merge(&dst, &src);
    ck_assert_int_eq(memcmp(&dst, &before, sizeof dst), 0);
    struct hpf_hib e1 = empty(1), e2 = empty(2);
    hp_hib_merge(&e1, &e2);
    ck_assert_uint_eq(e1.alloc_count, 0);
    ck_assert_uint_eq(e1.context_id, 1);
}
END_TEST

/* A running HIB gives, for blocks without access data, what the general add gives for them:
 * every field, over random sequences (cpus and the ms clock wrapping included), and nothing at
 * all when it has no block. */
START_TEST(test_run_matches_general)
{
    uint32_t seed = 12345;
    struct hp_hib_run r;
    hp_hib_run_reset(&r);
    struct hpf_hib none;
    hp_hib_run_to(&r, &none);
    ck_assert_uint_eq(none.alloc_count, 0);
    ck_assert_uint_eq(none.min_size, 0);
    for (int round = 0; round < 4; round++) {
        struct hpf_hib g = empty(0);
        hp_hib_run_reset(&r);
        uint32_t base = round == 3 ? UINT32_MAX - 600 : (uint32_t)round * 100000u;
        for (int i = 0; i < 500; i++) {
            seed = seed * 1103515245u + 12345u;
            uint32_t a_ms = base + (seed >> 8) % 1000, life = (seed >> 4) % 50;
            uint64_t size = round == 2 ? ((uint64_t)1 << 40) + (seed >> 16) : 1 + (seed >> 16) % 4096;
            struct hp_block_event e = ev(size, a_ms, a_ms + life, (seed >> 3) % 3, (seed >> 5) % 3);
            hp_hib_add(&g, &e);
            hp_hib_run_add(&r, e.size, e.alloc_ms, e.dealloc_ms, e.alloc_cpu, e.dealloc_cpu);
            struct hpf_hib p;
            hp_hib_run_to(&r, &p);
            ck_assert_int_eq(memcmp(&g, &p, sizeof g), 0);
        }
    }
}
END_TEST

int main(void)
{
    Suite *s = suite_create("hib");
    TCase *tc = tcase_create("hib");
    tcase_add_test(tc, test_single_event);
    tcase_add_test(tc, test_run_matches_general);
    tcase_add_test(tc, test_first_event_migrated);
    tcase_add_test(tc, test_three_events);
    tcase_add_test(tc, test_write_counts);
    tcase_add_test(tc, test_overlap_boundary);
    tcase_add_test(tc, test_clock_wrap);
    tcase_add_test(tc, test_large_values);
    tcase_add_test(tc, test_merge_matches_sequential);
    tcase_add_test(tc, test_merge_associative);
    tcase_add_test(tc, test_merge_older_keeps_last);
    tcase_add_test(tc, test_merge_into_empty);
    tcase_add_test(tc, test_merge_empty);
    suite_add_tcase(s, tc);
    return hp_unit_run(s);
}
