/* An allocator of the program's own, linked into the executable with a test program (sites.c):
 * the executable then defines malloc and friends, so LD_PRELOAD alone cannot put the shim in
 * front of them, and the shim has to patch them (backend/patch.c) to profile anything.
 *
 * Power-of-two size classes on free lists, carved from mmap'd chunks; large blocks are mmap'd
 * on their own. Every block has a 16-byte header: its usable size, and for aligned blocks the
 * start of the block they were cut from (24 bytes and 8-byte alignment with -DOWN_MALLOC_ALIGN8).
 * One spinlock. */
#include <errno.h>
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>

#define NCLASS 17          /* 16 B .. 1 MiB */
#define CHUNK (8u << 20)

#ifdef OWN_MALLOC_ALIGN8
/* Built with -DOWN_MALLOC_ALIGN8: a 24-byte header, so blocks are aligned to 8 bytes only (every
 * other one 16), as some programs' own allocators are. */
#define HDR 24
struct hdr {
    size_t pad;
    size_t usable;
    void *base;
};
#else
#define HDR 16
struct hdr {
    size_t usable;
    void *base; /* aligned block: what to free; else NULL */
};
#endif
_Static_assert(sizeof(struct hdr) == HDR, "HDR is the header's size");

static void *freelist[NCLASS];
static char *cur, *end;
static volatile int lock;
unsigned long own_malloc_calls; /* the program can check its allocator was used */

static void lk(void)
{
    while (__atomic_exchange_n(&lock, 1, __ATOMIC_ACQUIRE))
        while (lock)
            ;
}
static void unlk(void) { __atomic_store_n(&lock, 0, __ATOMIC_RELEASE); }

static int class_of(size_t n)
{
    int c = 0;
    while (((size_t)16 << c) < n)
        c++;
    return c;
}

static void *own_alloc(size_t n)
{
    if (n > ((size_t)1 << 40))
        return NULL;
    __atomic_add_fetch(&own_malloc_calls, 1, __ATOMIC_RELAXED);
    int c = class_of(n ? n : 1);
    if (c >= NCLASS) {
        size_t len = (n + HDR + 4095) & ~(size_t)4095;
        char *m = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        if (m == MAP_FAILED)
            return NULL;
        struct hdr *h = (struct hdr *)m;
        h->usable = len - HDR;
        h->base = NULL;
        return m + HDR;
    }
    size_t sz = (size_t)16 << c;
    lk();
    void *p = freelist[c];
    if (p) {
        freelist[c] = *(void **)p;
    } else {
        if (!cur || (size_t)(end - cur) < sz + HDR) {
            char *m = mmap(NULL, CHUNK, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
            if (m == MAP_FAILED) {
                unlk();
                return NULL;
            }
            cur = m;
            end = m + CHUNK;
        }
        struct hdr *h = (struct hdr *)cur;
        h->usable = sz;
        h->base = NULL;
        p = cur + HDR;
        cur += sz + HDR;
    }
    unlk();
    return p;
}

static void own_free(void *p)
{
    if (!p)
        return;
    struct hdr *h = (struct hdr *)p - 1;
    if (h->base) {
        own_free(h->base);
        return;
    }
    if (h->usable > ((size_t)16 << (NCLASS - 1))) {
        munmap(h, h->usable + HDR);
        return;
    }
    int c = class_of(h->usable);
    lk();
    *(void **)p = freelist[c];
    freelist[c] = p;
    unlk();
}

void *malloc(size_t n) { return own_alloc(n); }
void free(void *p) { own_free(p); }

void *calloc(size_t n, size_t size)
{
    size_t t;
    if (__builtin_mul_overflow(n, size, &t))
        return NULL;
    void *p = own_alloc(t);
    if (p)
        memset(p, 0, t);
    return p;
}

size_t malloc_usable_size(void *p)
{
    return p ? ((struct hdr *)p - 1)->usable : 0;
}

void *realloc(void *p, size_t n)
{
    if (!p)
        return own_alloc(n);
    size_t old = malloc_usable_size(p);
    if (n <= old && n > old / 2)
        return p;
    void *q = own_alloc(n);
    if (!q)
        return NULL;
    memcpy(q, p, old < n ? old : n);
    own_free(p);
    return q;
}

void *memalign(size_t align, size_t n)
{
    if (align <= 16)
        return own_alloc(n);
    if (align & (align - 1)) {
        errno = EINVAL;
        return NULL;
    }
    char *b = own_alloc(n + align + HDR);
    if (!b)
        return NULL;
    uintptr_t u = ((uintptr_t)b + HDR + align - 1) & ~(uintptr_t)(align - 1);
    struct hdr *h = (struct hdr *)u - 1;
    h->usable = n;
    h->base = b;
    return (void *)u;
}

void *aligned_alloc(size_t align, size_t n) { return memalign(align, n); }

int posix_memalign(void **out, size_t align, size_t n)
{
    if (align < sizeof(void *) || (align & (align - 1)))
        return EINVAL;
    void *p = memalign(align, n);
    if (!p)
        return ENOMEM;
    *out = p;
    return 0;
}

#ifdef OWN_DEFINES_API
/* Built with -DOWN_DEFINES_API (and -rdynamic): the program also defines the shim's public API, as
 * a fallback for runs without the shim might. It is still an allocator to patch, not another copy
 * of the shim. */
int heapprof_dump(void) { return -1; }
#endif
