/* A malloc of the program's own that serves the smallest requests from a pool of its own and
 * hands the rest to glibc through its __libc_* names (a common shape for counting or pooling
 * wrappers). Linked with a test program (sites.c), the executable defines malloc and friends.
 * The shim patches them, and must then send their calls of __libc_* to glibc, not back into
 * the shim (which would lead back here for ever); with patch_allocator=0 likewise. */
#include <stddef.h>
#include <string.h>

extern void *__libc_malloc(size_t);
extern void __libc_free(void *);
extern void *__libc_calloc(size_t, size_t);
extern void *__libc_realloc(void *, size_t);
extern void *__libc_memalign(size_t, size_t);

#define SMALL 16
static _Alignas(16) char pool[1 << 20];
static size_t used;
unsigned long wrap_small_blocks;

static int in_pool(const void *p) { return (const char *)p >= pool && (const char *)p < pool + sizeof pool; }

/* Pool memory is never reused, so it is still zero when handed out. */
static void *pool_alloc(size_t n)
{
    if (n > SMALL)
        return NULL;
    size_t at = __atomic_fetch_add(&used, SMALL, __ATOMIC_RELAXED);
    if (at + SMALL > sizeof pool)
        return NULL;
    __atomic_add_fetch(&wrap_small_blocks, 1, __ATOMIC_RELAXED);
    return pool + at;
}

void *malloc(size_t n)
{
    void *p = pool_alloc(n);
    return p ? p : __libc_malloc(n);
}

void free(void *p)
{
    if (!in_pool(p))
        __libc_free(p);
}

void *calloc(size_t n, size_t size)
{
    size_t t;
    if (__builtin_mul_overflow(n, size, &t))
        return NULL;
    void *p = pool_alloc(t);
    return p ? p : __libc_calloc(n, size);
}

void *realloc(void *p, size_t n)
{
    if (!in_pool(p))
        return __libc_realloc(p, n);
    void *q = pool_alloc(n);
    if (!q)
        q = __libc_malloc(n);
    if (q)
        memcpy(q, p, n < SMALL ? n : SMALL);
    return q;
}

void *memalign(size_t align, size_t n) { return __libc_memalign(align, n); }
