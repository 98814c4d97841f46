/* An allocator linked into the program, like Chromium's PartitionAlloc: its free checks that the
 * pointer starts one of its blocks and traps otherwise, so a block made by the shim (with its
 * header) that reaches it unpatched kills the program. It keeps the last block freed and hands
 * its address out again for the next request of that size, so a block freed past the entry
 * points is seen dead at the reuse. Built in variants (linked-chromium-like.sh), each also with
 * segments that are not contiguous (-z max-page-size=0x200000, as Chromium's):
 *   (none)        main frees through the internal pool_free, past free(): profiled without headers;
 *   -DSIZED_FREE  main frees through an unexported sized free that calls pool_free: the same;
 *   -DDISPATCH    free jumps through a table of functions that main also calls: the same;
 *   -DCOMPLETE    every free goes through free(): nothing past the entry points is found,
 *                 still profiled without headers (not an allocator family the shim knows).
 * Each run: 100 blocks of 100 bytes freed one by one as the variant frees (99 of them freed
 * unseen when the path is past the entry points, the last live), then 20 blocks of 200 bytes
 * freed through free(), then a block of 50 bytes grown by realloc to 300 and freed, then one of
 * 70 bytes made by realloc(NULL, 70) and freed. */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>

#define MAGIC 0x5a17c0de5a17c0deull
static char *cur, *end;
static uint64_t *last_freed; /* the block pool_free had last, handed out again for its size */

static void *pool_alloc(size_t n)
{
    n = (n + 15) & ~(size_t)15;
    if (last_freed && last_freed[-1] == n) {
        void *p = last_freed;
        last_freed = NULL;
        return p;
    }
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
    if (p)
        last_freed = p;
}

#ifdef SIZED_FREE
/* Like Chromium's sized delete: not exported, so the shim cannot patch it. */
static __attribute__((noinline)) void sized_free(void *p, size_t n)
{
    if (p && ((uint64_t *)p)[-1] < n)
        __builtin_trap();
    pool_free(p);
}
#endif

#ifdef DISPATCH
/* Chromium's allocator dispatch: the entry points call through a table the program uses too. */
struct dispatch {
    void (*free)(void *);
};
static const struct dispatch default_dispatch = {pool_free};
const struct dispatch *volatile dispatch = &default_dispatch;
__attribute__((noinline)) void free(void *p) { dispatch->free(p); }
#else
/* Not inlined into main: its calls go through the entry points, which the shim would patch. */
__attribute__((noinline)) void free(void *p) { pool_free(p); }
#endif
__attribute__((noinline)) void *malloc(size_t n) { return pool_alloc(n); }
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

int main(void)
{
    for (int i = 0; i < 100; i++) {
        void *p = malloc(100);
        sink = p;
#if defined(COMPLETE)
        free(p);
#elif defined(SIZED_FREE)
        sized_free(p, 100);
#elif defined(DISPATCH)
        dispatch->free(p);
#else
        pool_free(p); /* freed past free() */
#endif
    }
    for (int i = 0; i < 20; i++) {
        void *p = malloc(200);
        sink = p;
        free(p);
    }
    void *r = malloc(50);
    sink = r;
    r = realloc(r, 300); /* the 50 bytes freed, 300 allocated here */
    sink = r;
    free(r);
    void *z = realloc(NULL, 70); /* realloc of nothing: an allocation of 70 bytes here */
    sink = z;
    free(z);
    puts("ok");
    return 0;
}
