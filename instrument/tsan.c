/* gcc's ThreadSanitizer callbacks, as gcc emits them for -fsanitize=thread
 * --param tsan-instrument-func-entry-exit=0 (heapprof-cc's gcc mode; gcc's own runtime,
 * libtsan, is kept out of the link): a call before every load and store with its address, the
 * read and the write of p[i] += x each (gcc's asan callbacks check such an address once), and
 * atomic operations as calls that must do the operation. Each access counts one, as clang's
 * callbacks count one per instruction; an atomic load a read, every other atomic operation a
 * write (MemProf counts an atomic read-modify-write as one store); the ranges (struct copies)
 * one per 8 bytes, as clang's memcpy. */
#include "instrument.h"

/* The module constructors and libtsan_preinit.o's preinit entry call it. */
HP_RT_EXPORT void __tsan_init(void) { hp_rt_init(); }

#define HP_TSAN_ACCESS(size)                                                                    \
    HP_RT_EXPORT void __tsan_read##size(uintptr_t a) { hp_rt_count(a, 0); }                    \
    HP_RT_EXPORT void __tsan_write##size(uintptr_t a) { hp_rt_count(a, 1); }                   \
    HP_RT_EXPORT void __tsan_unaligned_read##size(uintptr_t a) { hp_rt_count(a, 0); }          \
    HP_RT_EXPORT void __tsan_unaligned_write##size(uintptr_t a) { hp_rt_count(a, 1); }         \
    HP_RT_EXPORT void __tsan_volatile_read##size(uintptr_t a) { hp_rt_count(a, 0); }           \
    HP_RT_EXPORT void __tsan_volatile_write##size(uintptr_t a) { hp_rt_count(a, 1); }

HP_TSAN_ACCESS(1)
HP_TSAN_ACCESS(2)
HP_TSAN_ACCESS(4)
HP_TSAN_ACCESS(8)
HP_TSAN_ACCESS(16)

HP_RT_EXPORT void __tsan_read_range(uintptr_t a, size_t n) { hp_rt_count_range(a, n, 0); }
HP_RT_EXPORT void __tsan_write_range(uintptr_t a, size_t n) { hp_rt_count_range(a, n, 1); }

/* C++: a constructor or destructor storing an object's vtable pointer, and a virtual call
 * reading it. */
HP_RT_EXPORT void __tsan_vptr_update(void **p, void *v)
{
    (void)v;
    hp_rt_count((uintptr_t)p, 1);
}
HP_RT_EXPORT void __tsan_vptr_read(void **p) { hp_rt_count((uintptr_t)p, 0); }

/* Entry and exit of functions (emitted only without the --param heapprof-cc gives): nothing
 * to count. */
HP_RT_EXPORT void __tsan_func_entry(void *pc) { (void)pc; }
HP_RT_EXPORT void __tsan_func_exit(void) {}

/* ---- atomics: the operation itself, one access counted first. Sequentially consistent
 * whatever order the program asked for (at least as strong as any it can ask for), but for
 * stores and fences, where that costs an xchg or an mfence on x86: release and acquire-release
 * there unless the program asked for sequential consistency. ---- */
#define HP_SC __ATOMIC_SEQ_CST
/* (the order's own bits: gcc may add its HLE flags above them) */
#define HP_IS_SC(mo) (((mo) & 0xffff) == __ATOMIC_SEQ_CST)

#define HP_TSAN_RMW(bits, type, op)                                                              \
    HP_RT_EXPORT type __tsan_atomic##bits##_##op(volatile type *a, type v, int mo)              \
    {                                                                                            \
        (void)mo;                                                                                \
        hp_rt_count((uintptr_t)a, 1);                                                            \
        return __atomic_##op(a, v, HP_SC);                                                       \
    }

#define HP_TSAN_ATOMICS(bits, type)                                                              \
    HP_RT_EXPORT type __tsan_atomic##bits##_load(const volatile type *a, int mo)                \
    {                                                                                            \
        (void)mo;                                                                                \
        hp_rt_count((uintptr_t)a, 0);                                                            \
        return __atomic_load_n(a, HP_SC);                                                        \
    }                                                                                            \
    HP_RT_EXPORT void __tsan_atomic##bits##_store(volatile type *a, type v, int mo)             \
    {                                                                                            \
        hp_rt_count((uintptr_t)a, 1);                                                            \
        if (HP_IS_SC(mo))                                                                        \
            __atomic_store_n(a, v, HP_SC);                                                       \
        else                                                                                     \
            __atomic_store_n(a, v, __ATOMIC_RELEASE);                                            \
    }                                                                                            \
    HP_RT_EXPORT type __tsan_atomic##bits##_exchange(volatile type *a, type v, int mo)          \
    {                                                                                            \
        (void)mo;                                                                                \
        hp_rt_count((uintptr_t)a, 1);                                                            \
        return __atomic_exchange_n(a, v, HP_SC);                                                 \
    }                                                                                            \
    HP_TSAN_RMW(bits, type, fetch_add)                                                           \
    HP_TSAN_RMW(bits, type, fetch_sub)                                                           \
    HP_TSAN_RMW(bits, type, fetch_and)                                                           \
    HP_TSAN_RMW(bits, type, fetch_or)                                                            \
    HP_TSAN_RMW(bits, type, fetch_xor)                                                           \
    HP_TSAN_RMW(bits, type, fetch_nand)                                                          \
    /* Strong and weak alike (a weak one may fail spuriously; this one never does): *c gets   \
     * the value found when it differs. */                                                      \
    HP_RT_EXPORT int __tsan_atomic##bits##_compare_exchange_strong(volatile type *a, type *c,   \
                                                                   type v, int mo, int fmo)     \
    {                                                                                            \
        (void)mo, (void)fmo;                                                                     \
        hp_rt_count((uintptr_t)a, 1);                                                            \
        return __atomic_compare_exchange_n(a, c, v, 0, HP_SC, HP_SC);                            \
    }                                                                                            \
    HP_RT_EXPORT int __tsan_atomic##bits##_compare_exchange_weak(volatile type *a, type *c,     \
                                                                 type v, int mo, int fmo)       \
    {                                                                                            \
        return __tsan_atomic##bits##_compare_exchange_strong(a, c, v, mo, fmo);                  \
    }                                                                                            \
    HP_RT_EXPORT type __tsan_atomic##bits##_compare_exchange_val(volatile type *a, type c,      \
                                                                 type v, int mo, int fmo)       \
    {                                                                                            \
        (void)mo, (void)fmo;                                                                     \
        hp_rt_count((uintptr_t)a, 1);                                                            \
        __atomic_compare_exchange_n(a, &c, v, 0, HP_SC, HP_SC);                                  \
        return c;                                                                                \
    }

HP_TSAN_ATOMICS(8, uint8_t)
HP_TSAN_ATOMICS(16, uint16_t)
HP_TSAN_ATOMICS(32, uint32_t)
HP_TSAN_ATOMICS(64, uint64_t)

#if defined(__x86_64__)
/* 16 bytes (__int128): gcc would call libatomic for these, which heapprof-cc does not link, so
 * by cmpxchg16b directly (every x86_64 processor since the first few has it). */
typedef unsigned __int128 hp_u128;

/* *a == *c: *a = v, 1; else *c = *a, 0. */
static int cas128(volatile hp_u128 *a, hp_u128 *c, hp_u128 v)
{
    uint64_t lo = (uint64_t)*c, hi = (uint64_t)(*c >> 64);
    int ok;
    __asm__ __volatile__("lock cmpxchg16b %1"
                         : "=@ccz"(ok), "+m"(*a), "+a"(lo), "+d"(hi)
                         : "b"((uint64_t)v), "c"((uint64_t)(v >> 64))
                         : "memory");
    if (!ok)
        *c = ((hp_u128)hi << 64) | lo;
    return ok;
}

static hp_u128 load128(volatile hp_u128 *a)
{
    hp_u128 c = 0;
    cas128(a, &c, 0); /* writes 0 over 0 if it was 0, else reads it */
    return c;
}

enum { OP_XCHG, OP_ADD, OP_SUB, OP_AND, OP_OR, OP_XOR, OP_NAND };

static hp_u128 rmw128(volatile hp_u128 *a, hp_u128 v, int op)
{
    hp_u128 old = load128(a), new;
    do {
        switch (op) {
        case OP_ADD: new = old + v; break;
        case OP_SUB: new = old - v; break;
        case OP_AND: new = old & v; break;
        case OP_OR: new = old | v; break;
        case OP_XOR: new = old ^ v; break;
        case OP_NAND: new = ~(old & v); break;
        default: new = v; break;
        }
    } while (!cas128(a, &old, new));
    return old;
}

HP_RT_EXPORT hp_u128 __tsan_atomic128_load(const volatile hp_u128 *a, int mo)
{
    (void)mo;
    hp_rt_count((uintptr_t)a, 0);
    return load128((volatile hp_u128 *)a);
}
HP_RT_EXPORT void __tsan_atomic128_store(volatile hp_u128 *a, hp_u128 v, int mo)
{
    (void)mo;
    hp_rt_count((uintptr_t)a, 1);
    rmw128(a, v, OP_XCHG);
}
#define HP_TSAN_RMW128(name, op)                                                                 \
    HP_RT_EXPORT hp_u128 __tsan_atomic128_##name(volatile hp_u128 *a, hp_u128 v, int mo)        \
    {                                                                                            \
        (void)mo;                                                                                \
        hp_rt_count((uintptr_t)a, 1);                                                            \
        return rmw128(a, v, op);                                                                 \
    }
HP_TSAN_RMW128(exchange, OP_XCHG)
HP_TSAN_RMW128(fetch_add, OP_ADD)
HP_TSAN_RMW128(fetch_sub, OP_SUB)
HP_TSAN_RMW128(fetch_and, OP_AND)
HP_TSAN_RMW128(fetch_or, OP_OR)
HP_TSAN_RMW128(fetch_xor, OP_XOR)
HP_TSAN_RMW128(fetch_nand, OP_NAND)

HP_RT_EXPORT int __tsan_atomic128_compare_exchange_strong(volatile hp_u128 *a, hp_u128 *c,
                                                          hp_u128 v, int mo, int fmo)
{
    (void)mo, (void)fmo;
    hp_rt_count((uintptr_t)a, 1);
    return cas128(a, c, v);
}
HP_RT_EXPORT int __tsan_atomic128_compare_exchange_weak(volatile hp_u128 *a, hp_u128 *c,
                                                        hp_u128 v, int mo, int fmo)
{
    return __tsan_atomic128_compare_exchange_strong(a, c, v, mo, fmo);
}
HP_RT_EXPORT hp_u128 __tsan_atomic128_compare_exchange_val(volatile hp_u128 *a, hp_u128 c,
                                                           hp_u128 v, int mo, int fmo)
{
    __tsan_atomic128_compare_exchange_strong(a, &c, v, mo, fmo);
    return c;
}
#endif

HP_RT_EXPORT void __tsan_atomic_thread_fence(int mo)
{
    if (HP_IS_SC(mo))
        __atomic_thread_fence(HP_SC);
    else
        __atomic_thread_fence(__ATOMIC_ACQ_REL);
}
HP_RT_EXPORT void __tsan_atomic_signal_fence(int mo)
{
    (void)mo;
    __atomic_signal_fence(HP_SC);
}
