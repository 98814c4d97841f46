/* An allocator linked into the program that the program also calls past its entry points, as
 * Chromium's allocator shim is (its code frees through its own dispatch): a block made by the
 * shim and freed that way would trap here, as it does in PartitionAlloc. Like Chromium it
 * exports ChromeMain (linked with -rdynamic), so the shim must leave its allocator alone. */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>

#define MAGIC 0x5a17c0de5a17c0deull
static char *cur, *end;

static void *pool_alloc(size_t n)
{
    n = (n + 15) & ~(size_t)15;
    if (!cur || (size_t)(end - cur) < n + 16) {
        size_t len = n + 16 > (1u << 24) ? n + 16 : (1u << 24);
        cur = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        if (cur == MAP_FAILED)
            return cur = NULL;
        end = cur + len;
    }
    uint64_t *h = (uint64_t *)cur;
    h[0] = MAGIC;
    h[1] = n;
    cur += n + 16;
    return h + 2;
}

/* The internal path: checks that p starts one of its blocks, like PartitionAlloc does. */
static __attribute__((noinline)) void pool_free(void *p)
{
    if (p && ((uint64_t *)p)[-2] != MAGIC)
        __builtin_trap();
}

/* Not inlined into main: its calls go through the entry points, which the shim would patch. */
__attribute__((noinline)) void *malloc(size_t n) { return pool_alloc(n); }
__attribute__((noinline)) void free(void *p) { pool_free(p); }
void __libc_cfree(void *p) { pool_free(p); }
size_t malloc_size(const void *p) { return p ? ((const uint64_t *)p)[-1] : 0; }
size_t malloc_usable_size(void *p) { return malloc_size(p); }

void *calloc(size_t n, size_t size)
{
    size_t t;
    if (__builtin_mul_overflow(n, size, &t))
        return NULL;
    return pool_alloc(t); /* fresh mmap memory is zero */
}

void *realloc(void *p, size_t n)
{
    void *q = pool_alloc(n);
    if (q && p)
        memcpy(q, p, malloc_size(p) < n ? malloc_size(p) : n);
    return q;
}

void *volatile sink;

int ChromeMain(void) { return 0; }

int main(void)
{
    for (int i = 0; i < 100; i++) {
        void *p = malloc(100);
        sink = p;
        pool_free(p); /* freed past free() */
    }
    puts("ok");
    return 0;
}
