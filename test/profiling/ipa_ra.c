/* An allocator linked into the program whose caller relies on gcc's interprocedural register
 * allocation (-fipa-ra, on at -O2): main allocates inline, keeps the pool's cursor in a register
 * the ABI lets free clobber, and calls free, which gcc knows leaves it alone. Patched to lead to
 * the shim without the entry's register-keeping routine (backend/keep_regs.c), free would
 * clobber it and main would crash (linked-ipa-ra.sh). Built with -fno-ipa-ra as well. */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#define MAGIC 0x5a17c0de5a17c0deull
static char *cur, *end_;
static inline void *pool_alloc(size_t n)
{
    n = (n + 15) & ~(size_t)15;
    if (!cur || (size_t)(end_ - cur) < n + 16) {
        cur = mmap(NULL, 1u << 24, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        end_ = cur + (1u << 24);
    }
    uint64_t *h = (uint64_t *)cur;
    h[0] = MAGIC;
    h[1] = n;
    cur += n + 16;
    return h + 2;
}
__attribute__((noinline)) void free(void *p) { if (p && ((uint64_t *)p)[-2] != MAGIC) __builtin_trap(); }
__attribute__((noinline)) void *malloc(size_t n) { return pool_alloc(n); }
void *calloc(size_t n, size_t s) { return pool_alloc(n * s); }
void *realloc(void *p, size_t n) { void *q = pool_alloc(n); if (p && q) memcpy(q, p, ((uint64_t *)p)[-1] < n ? ((uint64_t *)p)[-1] : n); return q; }
void *volatile sink;
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
