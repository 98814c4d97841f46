/* Bootstrap arena (see bootstrap.h): a small static region, then, only when that runs out, a
 * larger one mapped on demand; each bumped with compare-and-swap. Each block has a 32-byte
 * prefix holding its size so realloc and malloc_usable_size can answer later. */
#include "bootstrap/bootstrap.h"

#include <sys/mman.h>

/* Measured on glibc 2.36: resolving the allocator needs well under 4 KiB (failed dlsym lookups
 * and dlerror strings). The static part, in .bss, covers that many times over; the mapped part
 * covers threads racing the first malloc and loader activity during init, which is rare. Both
 * count towards the process's address space (ulimit -v; under strict overcommit, its commit
 * charge): 8 MiB of .bss, as this once was, cost every profiled process that much. */
#define BOOT_FIRST (256u << 10)
#define BOOT_MORE (8u << 20)
#define BOOT_PREFIX 32u

static char first[BOOT_FIRST] __attribute__((aligned(4096)));
static char *more; /* mapped when first is full */
static uintptr_t bump_first, bump_more; /* offsets of the next free byte */

/* A block of size bytes aligned to align from region r of cap bytes, bumped at *bump. */
static void *carve(char *r, size_t cap, uintptr_t *bump, size_t size, size_t align)
{
    uintptr_t old = __atomic_load_n(bump, __ATOMIC_RELAXED);
    for (;;) {
        uintptr_t base = (uintptr_t)r + old + BOOT_PREFIX;
        uintptr_t user = (base + align - 1) & ~(uintptr_t)(align - 1);
        uintptr_t end = user + ((size + 15) & ~(size_t)15);
        if (end > (uintptr_t)r + cap) /* size and align are at most BOOT_MORE: no overflow */
            return NULL;
        uintptr_t next = end - (uintptr_t)r;
        if (__atomic_compare_exchange_n(bump, &old, next, 1, __ATOMIC_ACQ_REL, __ATOMIC_RELAXED)) {
            ((uint64_t *)user)[-1] = size;
            return (void *)user; /* .bss and fresh mappings are zero: calloc needs nothing more */
        }
    }
}

static char *more_region(void)
{
    char *m = __atomic_load_n(&more, __ATOMIC_ACQUIRE);
    if (m)
        return m;
    /* mmap allocates nothing in user space: safe before the allocator is known. */
    void *n = mmap(NULL, BOOT_MORE, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE,
                   -1, 0);
    if (n == MAP_FAILED)
        return NULL;
    if (__atomic_compare_exchange_n(&more, &m, (char *)n, 0, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE))
        return n;
    munmap(n, BOOT_MORE); /* another thread mapped it first */
    return m;
}

void *hp_boot_alloc(size_t size, size_t align)
{
    if (align < BOOT_PREFIX)
        align = BOOT_PREFIX;
    if (align & (align - 1) || align > BOOT_MORE || size > BOOT_MORE)
        return NULL;
    void *p = carve(first, BOOT_FIRST, &bump_first, size, align);
    if (p)
        return p;
    char *m = more_region();
    return m ? carve(m, BOOT_MORE, &bump_more, size, align) : NULL;
}

int hp_boot_owns(const void *p)
{
    if ((uintptr_t)p - (uintptr_t)first < BOOT_FIRST)
        return 1;
    const char *m = __atomic_load_n(&more, __ATOMIC_RELAXED);
    return __builtin_expect(m != NULL, 0) && (uintptr_t)p - (uintptr_t)m < BOOT_MORE;
}

size_t hp_boot_size(const void *p) { return (size_t)((const uint64_t *)p)[-1]; }

uint64_t hp_boot_bytes(void)
{
    return __atomic_load_n(&bump_first, __ATOMIC_RELAXED) + __atomic_load_n(&bump_more, __ATOMIC_RELAXED);
}
