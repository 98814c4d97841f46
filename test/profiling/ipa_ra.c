/* An allocator linked into the program whose callers rely on gcc's interprocedural register
 * allocation (-fipa-ra, on at -O2): gcc knows which registers its malloc and free leave alone
 * (they are in this file and call nothing outside it: the pool is a static array) and keeps
 * values there across the calls, registers the ABI lets a callee clobber. Patched to lead to
 * the shim without the entry's register-keeping routine (backend/keep_regs.c), the values are
 * lost (linked-ipa-ra.sh runs both variants bare and under the shim):
 *   (none)   main allocates inline and keeps the pool's cursor in a general register across
 *            free: it crashed;
 *   -DXMM    main keeps doubles in xmm registers across malloc and free (its loop counter in
 *            memory, so no general register is kept): it printed other numbers. */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#define MAGIC 0x5a17c0de5a17c0deull
static char arena[1 << 24] __attribute__((aligned(16)));
static char *cur, *end_;
static inline void *pool_alloc(size_t n)
{
    n = (n + 15) & ~(size_t)15;
    if (!cur || (size_t)(end_ - cur) < n + 16) {
        cur = arena;
        end_ = arena + sizeof arena;
    }
    uint64_t *h = (uint64_t *)cur;
    h[0] = MAGIC;
    h[1] = n;
    cur += n + 16;
    return h + 2;
}
__attribute__((noinline)) void free(void *p) { if (p && ((uint64_t *)p)[-2] != MAGIC) __builtin_trap(); }
__attribute__((noinline)) void *malloc(size_t n) { return pool_alloc(n); }
void *calloc(size_t n, size_t s) { void *p = pool_alloc(n * s); memset(p, 0, n * s); return p; }
void *realloc(void *p, size_t n) { void *q = pool_alloc(n); if (p && q) memcpy(q, p, ((uint64_t *)p)[-1] < n ? ((uint64_t *)p)[-1] : n); return q; }
void *volatile sink;
#ifdef XMM
volatile double seed = 1.25;
volatile int count;
int main(void)
{
    double a = seed, b = seed * 3, c = seed * 7;
    for (count = 0; count < 100; count++) {
        void *p = malloc(96);
        sink = p;
        free(p);
        a = a * 1.001 + b;
        b = b * 0.999 + c;
        c = c * 1.0001 + a * 1e-6;
    }
    printf("%.9g %.9g %.9g\n", a, b, c);
    return 0;
}
#else
int main(void)
{
    for (int i = 0; i < 100; i++) {
        void *p = pool_alloc(96);
        sink = p;
        free(p);
    }
    puts("ok");
    return 0;
}
#endif
