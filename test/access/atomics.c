/* Every atomic operation gcc's ThreadSanitizer instrumentation turns into a call of the runtime
 * (instrument/tsan.c), at each width, on a heap block: the program prints what each returned
 * and left, which must equal a plain build's (case access-atomics). site_atomics makes one
 * block and runs ATOMIC_OPS operations on it, each counted as one access. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

static void *volatile keep;

#define OPS(T, a, fmt)                                                                           \
    do {                                                                                         \
        T e = 5, r;                                                                              \
        __atomic_store_n(a, (T)5, __ATOMIC_RELAXED);                                             \
        __atomic_store_n(a, (T)7, __ATOMIC_SEQ_CST);                                             \
        r = __atomic_load_n(a, __ATOMIC_ACQUIRE);                                                \
        printf(fmt, (unsigned long long)r);                                                      \
        r = __atomic_fetch_add(a, (T)10, __ATOMIC_SEQ_CST);                                      \
        printf(fmt, (unsigned long long)r);                                                      \
        r = __atomic_sub_fetch(a, (T)3, __ATOMIC_RELEASE);                                       \
        printf(fmt, (unsigned long long)r);                                                      \
        r = __atomic_fetch_and(a, (T)0x3c, __ATOMIC_ACQ_REL);                                    \
        printf(fmt, (unsigned long long)r);                                                      \
        r = __atomic_or_fetch(a, (T)0x41, __ATOMIC_RELAXED);                                     \
        printf(fmt, (unsigned long long)r);                                                      \
        r = __atomic_fetch_xor(a, (T)0xff, __ATOMIC_SEQ_CST);                                    \
        printf(fmt, (unsigned long long)r);                                                      \
        r = __atomic_fetch_nand(a, (T)0x0f, __ATOMIC_SEQ_CST);                                   \
        printf(fmt, (unsigned long long)r);                                                      \
        r = __atomic_exchange_n(a, (T)9, __ATOMIC_SEQ_CST);                                      \
        printf(fmt, (unsigned long long)r);                                                      \
        printf("cas %d ", __atomic_compare_exchange_n(a, &e, (T)11, 0, __ATOMIC_SEQ_CST,         \
                                                      __ATOMIC_RELAXED));                        \
        printf(fmt, (unsigned long long)e);                                                      \
        e = 9;                                                                                   \
        while (!__atomic_compare_exchange_n(a, &e, (T)12, 1, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE)) \
            ;                                                                                    \
        r = __sync_val_compare_and_swap(a, (T)12, (T)13);                                        \
        printf(fmt, (unsigned long long)r);                                                      \
        printf("bool %d ", (int)__sync_bool_compare_and_swap(a, (T)12, (T)14));                  \
        r = __sync_lock_test_and_set(a, (T)15);                                                  \
        printf(fmt, (unsigned long long)r);                                                      \
        __sync_lock_release(a);                                                                  \
        r = __sync_fetch_and_add(a, (T)2);                                                       \
        printf(fmt, (unsigned long long)r);                                                      \
        __atomic_thread_fence(__ATOMIC_SEQ_CST);                                                 \
        __atomic_thread_fence(__ATOMIC_ACQUIRE);                                                 \
        __atomic_signal_fence(__ATOMIC_SEQ_CST);                                                 \
        printf(fmt "\n", (unsigned long long)__atomic_load_n(a, __ATOMIC_RELAXED));              \
    } while (0)

__attribute__((noinline)) static void site_atomics(void)
{
    unsigned char *p = aligned_alloc(64, 64);
    keep = p;
    OPS(uint8_t, (uint8_t *)p, "%llu ");
    OPS(uint16_t, (uint16_t *)(p + 16), "%llu ");
    OPS(uint32_t, (uint32_t *)(p + 32), "%llu ");
    OPS(uint64_t, (uint64_t *)(p + 48), "%llu ");
    free(keep);
}

/* 16 bytes: the high half shows that the whole value moved. */
__attribute__((noinline)) static void site_atomics16(void)
{
    unsigned __int128 *a = aligned_alloc(64, 64), e = 1, one = 1;
    keep = a;
    __atomic_store_n(a, (one << 64) | 1, __ATOMIC_SEQ_CST);
    unsigned __int128 r = __atomic_fetch_add(a, (one << 64) | 2, __ATOMIC_SEQ_CST);
    int ok = __atomic_compare_exchange_n(a, &e, 5, 0, __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST);
    unsigned __int128 x = __atomic_exchange_n(a, one << 100, __ATOMIC_SEQ_CST);
    unsigned __int128 l = __atomic_load_n(a, __ATOMIC_SEQ_CST);
    printf("128: %llx:%llx %d %llx:%llx %llx:%llx %llx:%llx\n", (unsigned long long)(r >> 64),
           (unsigned long long)r, ok, (unsigned long long)(e >> 64), (unsigned long long)e,
           (unsigned long long)(x >> 64), (unsigned long long)x, (unsigned long long)(l >> 64),
           (unsigned long long)l);
    free(keep);
}

int main(void)
{
    site_atomics();
    site_atomics16();
    return 0;
}
