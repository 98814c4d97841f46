/* Unit tests for the chunk header (shim/core/header_internal.h): layout, the check word and
 * size/cpu packing. */
#include "unit_support.h"

#include "core/header_internal.h"

#include <stddef.h>
#include <stdint.h>


START_TEST(test_size_and_offsets)
{
    ck_assert_uint_eq(sizeof(struct hp_header), 32);
    ck_assert_uint_eq(HP_HEADER_SIZE, 32);
    ck_assert_uint_eq(offsetof(struct hp_header, size_cpu), 0);
    ck_assert_uint_eq(offsetof(struct hp_header, context_id), 8);
    ck_assert_uint_eq(offsetof(struct hp_header, live_ref), 12);
    ck_assert_uint_eq(offsetof(struct hp_header, alloc_ms), 16);
    ck_assert_uint_eq(offsetof(struct hp_header, reserved), 20);
    ck_assert_uint_eq(offsetof(struct hp_header, from_memalign), 22);
    /* The fields that recognise a block live in the last 9 bytes (23..31), out of reach of
     * free-list links written at the start of a freed chunk. */
    ck_assert_uint_eq(offsetof(struct hp_header, state), 23);
    ck_assert_uint_eq(offsetof(struct hp_header, base_off), 24);
    ck_assert_uint_eq(offsetof(struct hp_header, check), 28);
    ck_assert_uint_eq(offsetof(struct hp_header, check) + sizeof(uint32_t), 32);
    ck_assert_int_ge((int)offsetof(struct hp_header, state), 32 - 9);
}
END_TEST

START_TEST(test_hdr_is_just_below_user)
{
    _Alignas(32) unsigned char buf[128];
    void *user = buf + 64;
    ck_assert_ptr_eq((void *)hp_hdr(user), (void *)(buf + 32));
    struct hp_header *h = hp_hdr(user);
    h->base_off = 64; /* 64 bytes back */
    ck_assert_ptr_eq(hp_hdr_raw(user, h), (void *)buf);
    h->base_off = 32;
    ck_assert_ptr_eq(hp_hdr_raw(user, h), (void *)(buf + 32));
    h->base_off = 0;
    ck_assert_ptr_eq(hp_hdr_raw(user, h), user);
}
END_TEST

START_TEST(test_check_depends_on_offset)
{
    hp_secret = 0x123456789abcdef0ull;
    const void *u = (const void *)(uintptr_t)0x7f0000001000ull;
    uint32_t c0 = hp_header_check(u, 0);
    for (uint32_t off = 1; off < 4096; off++) {
        uint32_t c = hp_header_check(u, off);
        ck_assert_uint_ne(c, c0);
        /* The offset enters linearly: the difference is exactly the offset. */
        ck_assert_uint_eq(c ^ c0, off);
    }
}
END_TEST

static int cmp_u32(const void *a, const void *b)
{
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    return x < y ? -1 : x > y;
}

START_TEST(test_check_depends_on_address)
{
    hp_secret = 0x0badc0ffee0ddf00ull;
    enum { N = 2048 };
    static uint32_t seen[N];
    uintptr_t base = 0x55550000a000ull;
    for (int i = 0; i < N; i++)
        seen[i] = hp_header_check((const void *)(base + (uintptr_t)i * 32), 2);
    /* 2048 nearby 32-aligned addresses: all checks distinct (a collision among 2^11 values in
     * 2^32 is possible for a random function but does not happen for this mixer and inputs). */
    uint32_t d = seen[0] ^ seen[1];
    qsort(seen, N, sizeof seen[0], cmp_u32);
    int dups = 0;
    for (int i = 1; i < N; i++)
        dups += seen[i] == seen[i - 1];
    ck_assert_int_eq(dups, 0);
    /* Neighbouring addresses differ in many bits, not one. */
    ck_assert_int_ge(__builtin_popcount(d), 4);
}
END_TEST

START_TEST(test_check_depends_on_secret)
{
    const void *u = (const void *)(uintptr_t)0x7ffff7a00040ull;
    hp_secret = 1;
    uint32_t a = hp_header_check(u, 3);
    hp_secret = 2;
    uint32_t b = hp_header_check(u, 3);
    hp_secret = 0xffffffffffffffffull;
    uint32_t c = hp_header_check(u, 3);
    ck_assert_uint_ne(a, b);
    ck_assert_uint_ne(a, c);
    ck_assert_uint_ne(b, c);
    /* Same inputs, same answer. */
    hp_secret = 2;
    ck_assert_uint_eq(hp_header_check(u, 3), b);
}
END_TEST

static void pack(struct hp_header *h, uint64_t size, uint32_t cpu)
{
    /* What alloc.c's finish() stores. */
    h->size_cpu = size | ((uint64_t)(cpu & 0xffff) << 48);
}

START_TEST(test_size_cpu_roundtrip)
{
    static const uint64_t sizes[] = {0, 1, 31, 32, 4096, (uint64_t)1 << 32, HP_MAX_REQUEST - 1, HP_MAX_REQUEST};
    static const uint32_t cpus[] = {0, 1, 255, 256, 0x7fff, 0x8000, 0xfffe, 0xffff};
    struct hp_header h;
    memset(&h, 0, sizeof h);
    for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++)
        for (size_t j = 0; j < sizeof cpus / sizeof cpus[0]; j++) {
            pack(&h, sizes[i], cpus[j]);
            ck_assert_uint_eq(hp_hdr_size(&h), sizes[i]);
            ck_assert_uint_eq(hp_hdr_cpu(&h), cpus[j]);
        }
    ck_assert_uint_eq(HP_MAX_REQUEST, 0x7fffffffffffull);
    /* The largest size and cpu together use every bit but 47. */
    pack(&h, HP_MAX_REQUEST, 0xffff);
    ck_assert_uint_eq(h.size_cpu, 0xffff7fffffffffffull);
}
END_TEST

START_TEST(test_state_values_distinct)
{
    ck_assert_int_ne(HP_STATE_LIVE, HP_STATE_FREED);
    ck_assert_int_ne(HP_STATE_LIVE, 0);
    ck_assert_int_ne(HP_STATE_FREED, 0);
    ck_assert_uint_eq(HP_MIN_ALIGN, 32);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("header");
    TCase *tc = tcase_create("header");
    tcase_add_test(tc, test_size_and_offsets);
    tcase_add_test(tc, test_hdr_is_just_below_user);
    tcase_add_test(tc, test_check_depends_on_offset);
    tcase_add_test(tc, test_check_depends_on_address);
    tcase_add_test(tc, test_check_depends_on_secret);
    tcase_add_test(tc, test_size_cpu_roundtrip);
    tcase_add_test(tc, test_state_values_distinct);
    suite_add_tcase(s, tc);
    return hp_unit_run(s);
}
