/* An allocator whose every entry point is async-signal-safe, for handler_allocs.c: preloaded
 * after the shim it is the shim's backend, so a signal handler may allocate while the program is
 * inside it (glibc's malloc, interrupted, can deadlock or corrupt its heap: a program that does
 * that bare is wrong, whatever the shim does). Blocks are cut from one reserved region with an
 * atomic add and never reused; each has a 16-byte header holding its size. */
#include <errno.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>

#define REGION ((size_t)16 << 30)

static char *base;
static size_t used;

static char *region(void)
{
    char *b = __atomic_load_n(&base, __ATOMIC_ACQUIRE);
    if (b)
        return b;
    char *m = mmap(NULL, REGION, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (m == MAP_FAILED)
        return NULL;
    char *none = NULL;
    if (!__atomic_compare_exchange_n(&base, &none, m, 0, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE)) {
        munmap(m, REGION);
        return none;
    }
    return m;
}

static void *bump(size_t n, size_t align)
{
    char *b = region();
    if (!b || n > REGION || align > 4096) {
        errno = ENOMEM;
        return NULL;
    }
    size_t need = (n + 16 + align + 15) & ~(size_t)15;
    size_t at = __atomic_fetch_add(&used, need, __ATOMIC_RELAXED);
    if (at + need > REGION) {
        errno = ENOMEM;
        return NULL;
    }
    uintptr_t p = ((uintptr_t)b + at + 16 + align - 1) & ~(uintptr_t)(align - 1);
    ((size_t *)p)[-1] = n;
    return (void *)p;
}

void *malloc(size_t n) { return bump(n, 16); }
void free(void *p) { (void)p; }
void *calloc(size_t k, size_t n)
{
    size_t t;
    if (__builtin_mul_overflow(k, n, &t)) {
        errno = ENOMEM;
        return NULL;
    }
    return bump(t, 16); /* fresh pages: already zero */
}
size_t malloc_usable_size(void *p) { return p ? ((size_t *)p)[-1] : 0; }
void *realloc(void *p, size_t n)
{
    void *q = bump(n, 16);
    if (q && p) {
        size_t old = ((size_t *)p)[-1];
        memcpy(q, p, old < n ? old : n);
    }
    return q;
}
void *memalign(size_t a, size_t n) { return bump(n, a < 16 ? 16 : a); }
void *aligned_alloc(size_t a, size_t n) { return memalign(a, n); }
int posix_memalign(void **r, size_t a, size_t n)
{
    void *p = memalign(a, n);
    if (!p)
        return ENOMEM;
    *r = p;
    return 0;
}
