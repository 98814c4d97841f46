/* Unit tests for the address tables (shim/core/pool_table.c): inserts, replaces and
 * removals against a reference, taking a pool's objects out while the table moves them, several
 * threads at once, and a metadata budget that runs out. Each test runs in its own fork. */
#include "unit_support.h"

#include "core/pool_internal.h"
#include "rt/rt.h"

#include <pthread.h>
#include <stdint.h>

/* Addresses like a pool's: a stride, some not 32-byte aligned. */
static uintptr_t addr_of(unsigned i) { return 0x7f0000000000u + (uintptr_t)i * 24; }

static struct hp_pool_obj obj(uintptr_t a, uintptr_t pool, uint64_t size)
{
    struct hp_pool_obj o = {a, pool, size, (uint32_t)(a >> 3), 7, 1, 0};
    return o;
}

START_TEST(test_insert_remove)
{
    hp_meta_init(256u << 20);
    enum { N = 100000 };
    struct hp_pool_obj old, out;
    for (unsigned i = 0; i < N; i++) {
        struct hp_pool_obj o = obj(addr_of(i), 0, i);
        ck_assert_int_eq(hp_ptab_insert(&hp_pool_objs, &o, &old), 1);
    }
    ck_assert_uint_eq(hp_ptab_count(&hp_pool_objs), N);
    /* Every other one removed: the right object comes out, and only once. */
    for (unsigned i = 0; i < N; i += 2) {
        ck_assert_int_eq(hp_ptab_remove(&hp_pool_objs, addr_of(i), &out), 1);
        ck_assert_uint_eq(out.addr, addr_of(i));
        ck_assert_uint_eq(out.size, i);
        ck_assert_uint_eq(out.ctx, (uint32_t)(addr_of(i) >> 3));
        ck_assert_int_eq(hp_ptab_remove(&hp_pool_objs, addr_of(i), &out), 0);
    }
    ck_assert_uint_eq(hp_ptab_count(&hp_pool_objs), N / 2);
    /* The rest are still found after the removals moved them (backward shift). */
    for (unsigned i = 1; i < N; i += 2) {
        ck_assert_int_eq(hp_ptab_remove(&hp_pool_objs, addr_of(i), &out), 1);
        ck_assert_uint_eq(out.size, i);
    }
    ck_assert_uint_eq(hp_ptab_count(&hp_pool_objs), 0);
    ck_assert_int_eq(hp_ptab_remove(&hp_pool_objs, addr_of(3), &out), 0);
}
END_TEST

START_TEST(test_replace)
{
    hp_meta_init(64u << 20);
    struct hp_pool_obj a = obj(0x1000, 1, 10), b = obj(0x1000, 2, 20), old, out;
    ck_assert_int_eq(hp_ptab_insert(&hp_pool_objs, &a, &old), 1);
    ck_assert_int_eq(hp_ptab_insert(&hp_pool_objs, &b, &old), 2);
    ck_assert_uint_eq(old.size, 10);
    ck_assert_uint_eq(old.pool, 1);
    ck_assert_uint_eq(hp_ptab_count(&hp_pool_objs), 1);
    ck_assert_int_eq(hp_ptab_remove(&hp_pool_objs, 0x1000, &out), 1);
    ck_assert_uint_eq(out.size, 20);
}
END_TEST

/* The two tables are apart: a pool object may start where the allocator's block it was carved
 * from (kept in the headerless table) starts. */
START_TEST(test_two_tables)
{
    hp_meta_init(64u << 20);
    struct hp_pool_obj blk = obj(0x2000, 0, 4096), o = obj(0x2000, 5, 64), old, out;
    ck_assert_int_eq(hp_ptab_insert(&hp_headerless_blocks, &blk, &old), 1);
    ck_assert_int_eq(hp_ptab_insert(&hp_pool_objs, &o, &old), 1);
    ck_assert_uint_eq(hp_ptab_count(&hp_pool_objs), 1);
    ck_assert_uint_eq(hp_ptab_count(&hp_headerless_blocks), 1);
    unsigned cursor = 0;
    struct hp_pool_obj batch[4];
    ck_assert_uint_eq(hp_ptab_take_pool(&hp_pool_objs, 5, &cursor, batch, 4), 1);
    ck_assert_int_eq(hp_ptab_remove(&hp_pool_objs, 0x2000, &out), 0);
    ck_assert_int_eq(hp_ptab_remove(&hp_headerless_blocks, 0x2000, &out), 1);
    ck_assert_uint_eq(out.size, 4096);
}
END_TEST

START_TEST(test_take_pool)
{
    hp_meta_init(256u << 20);
    enum { N = 30000 };
    struct hp_pool_obj old, batch[7];
    for (unsigned i = 0; i < N; i++) {
        struct hp_pool_obj o = obj(addr_of(i), 1 + i % 3, i);
        ck_assert_int_eq(hp_ptab_insert(&hp_pool_objs, &o, &old), 1);
    }
    static unsigned char seen[N];
    unsigned cursor = 0, taken = 0;
    size_t n;
    while ((n = hp_ptab_take_pool(&hp_pool_objs, 2, &cursor, batch, 7)) > 0) {
        for (size_t k = 0; k < n; k++) {
            ck_assert_uint_eq(batch[k].pool, 2);
            unsigned i = (unsigned)batch[k].size;
            ck_assert_uint_eq(batch[k].addr, addr_of(i));
            ck_assert_int_eq(seen[i], 0);
            seen[i] = 1;
            taken++;
        }
    }
    ck_assert_uint_eq(taken, N / 3);
    ck_assert_uint_eq(hp_ptab_count(&hp_pool_objs), N - N / 3);
    /* Nothing of pool 2 left; the other pools' objects all still there. */
    cursor = 0;
    ck_assert_uint_eq(hp_ptab_take_pool(&hp_pool_objs, 2, &cursor, batch, 7), 0);
    struct hp_pool_obj out;
    for (unsigned i = 0; i < N; i++)
        ck_assert_int_eq(hp_ptab_remove(&hp_pool_objs, addr_of(i), &out), i % 3 != 1);
}
END_TEST

/* Four threads, each inserting and removing addresses of its own in waves. */
static void *churn(void *arg)
{
    unsigned base = (unsigned)(uintptr_t)arg * 1000000u;
    struct hp_pool_obj old, out;
    for (unsigned wave = 0; wave < 20; wave++) {
        for (unsigned i = 0; i < 5000; i++) {
            struct hp_pool_obj o = obj(addr_of(base + i), 0, base + i);
            if (hp_ptab_insert(&hp_pool_objs, &o, &old) != 1)
                return (void *)1;
        }
        for (unsigned i = 0; i < 5000; i++)
            if (!hp_ptab_remove(&hp_pool_objs, addr_of(base + i), &out) || out.size != base + i)
                return (void *)1;
    }
    return NULL;
}

START_TEST(test_threads)
{
    hp_meta_init(256u << 20);
    pthread_t th[4];
    for (uintptr_t i = 0; i < 4; i++)
        pthread_create(&th[i], NULL, churn, (void *)i);
    for (int i = 0; i < 4; i++) {
        void *r;
        pthread_join(th[i], &r);
        ck_assert_ptr_null(r);
    }
    ck_assert_uint_eq(hp_ptab_count(&hp_pool_objs), 0);
}
END_TEST

/* A budget too small for the table: inserts fail (0), nothing breaks, what got in comes out. */
START_TEST(test_budget)
{
    hp_meta_init(1u << 20);
    struct hp_pool_obj old, out;
    unsigned in = 0, refused = 0;
    for (unsigned i = 0; i < 200000; i++) {
        struct hp_pool_obj o = obj(addr_of(i), 0, i);
        int r = hp_ptab_insert(&hp_pool_objs, &o, &old);
        ck_assert_int_ne(r, 2);
        if (r == 1)
            in++;
        else
            refused++;
    }
    ck_assert_uint_gt(refused, 0);
    ck_assert_uint_eq(hp_ptab_count(&hp_pool_objs), in);
    unsigned back = 0;
    for (unsigned i = 0; i < 200000; i++)
        back += (unsigned)hp_ptab_remove(&hp_pool_objs, addr_of(i), &out);
    ck_assert_uint_eq(back, in);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("pool_table");
    TCase *tc = tcase_create("core");
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, test_insert_remove);
    tcase_add_test(tc, test_replace);
    tcase_add_test(tc, test_two_tables);
    tcase_add_test(tc, test_take_pool);
    tcase_add_test(tc, test_threads);
    tcase_add_test(tc, test_budget);
    suite_add_tcase(s, tc);
    return hp_unit_run(s);
}
