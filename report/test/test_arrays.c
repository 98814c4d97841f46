/* Growing arrays and the search of arrays sorted by address (arrays.c). */
#include <check.h>
#include <stdint.h>
#include <stdlib.h>

#include "harness.h"
#include "hr_arrays.h"

struct range {
    uint64_t start, end;
    int tag;
};

START_TEST(grow_doubles_from_first_cap)
{
    int *v = NULL;
    size_t cap = 0, n = 0;
    for (int i = 0; i < 100; i++) {
        ck_assert_int_eq(hr_grow(&v, &cap, n, sizeof *v, 4), 0);
        ck_assert(n < cap);
        v[n++] = i;
    }
    ck_assert_uint_eq(cap, 128); /* 4, 8, ..., 128 */
    for (int i = 0; i < 100; i++)
        ck_assert_int_eq(v[i], i);
    ck_assert_int_eq(hr_grow(&v, &cap, 5, sizeof *v, 4), 0); /* room already: unchanged */
    ck_assert_uint_eq(cap, 128);
    free(v);
}
END_TEST

START_TEST(sorted_by_start)
{
    struct range r[] = {{300, 400, 3}, {100, 200, 1}, {200, 250, 2}};
    qsort(r, 3, sizeof r[0], hr_start_cmp);
    ck_assert_int_eq(r[0].tag, 1);
    ck_assert_int_eq(r[2].tag, 3);
    ck_assert_uint_eq(hr_first_above(r, 3, sizeof r[0], 99), 0);   /* before every range */
    ck_assert_uint_eq(hr_first_above(r, 3, sizeof r[0], 100), 1);  /* r[0] starts at it */
    ck_assert_uint_eq(hr_first_above(r, 3, sizeof r[0], 260), 2);  /* r[1] the last below */
    ck_assert_uint_eq(hr_first_above(r, 3, sizeof r[0], 1000), 3); /* past all */
    ck_assert_uint_eq(hr_first_above(r, 0, sizeof r[0], 5), 0);
    uint64_t big = UINT64_MAX, small = 1;
    ck_assert_int_eq(hr_start_cmp(&small, &big), -1);
    ck_assert_int_eq(hr_start_cmp(&big, &small), 1);
    ck_assert_int_eq(hr_start_cmp(&big, &big), 0);
}
END_TEST

int main(void)
{
    TCase *tc = ht_tcase("report_arrays", "arrays", 0);
    tcase_add_test(tc, grow_doubles_from_first_cap);
    tcase_add_test(tc, sorted_by_start);
    return ht_run();
}
