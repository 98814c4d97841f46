/* Bootstrap arena (see bootstrap.h): one static region bumped with compare-and-swap. Each block
 * has a 32-byte prefix holding its size so realloc and malloc_usable_size can answer later. */
#include "bootstrap.h"

/* Measured on glibc 2.36: resolving the allocator needs well under 4 KiB (failed dlsym lookups
 * and dlerror strings); the rest covers threads racing the first malloc and loader activity
 * during init. The region is .bss, so untouched pages cost nothing. */
#define BOOT_SIZE (8u << 20)
#define BOOT_PREFIX 32u

static char arena[BOOT_SIZE] __attribute__((aligned(4096)));
static uintptr_t bump; /* offset of the next free byte */

void *hp_boot_alloc(size_t size, size_t align)
{
    if (align < BOOT_PREFIX)
        align = BOOT_PREFIX;
    if (align & (align - 1) || align > BOOT_SIZE || size > BOOT_SIZE)
        return NULL;
    uintptr_t old = __atomic_load_n(&bump, __ATOMIC_RELAXED);
    for (;;) {
        uintptr_t base = (uintptr_t)arena + old + BOOT_PREFIX;
        uintptr_t user = (base + align - 1) & ~(uintptr_t)(align - 1);
        uintptr_t end = user + ((size + 15) & ~(size_t)15);
        if (end > (uintptr_t)arena + BOOT_SIZE)
            return NULL;
        uintptr_t next = end - (uintptr_t)arena;
        if (__atomic_compare_exchange_n(&bump, &old, next, 1, __ATOMIC_ACQ_REL, __ATOMIC_RELAXED)) {
            ((uint64_t *)user)[-1] = size;
            return (void *)user; /* .bss is already zero: calloc needs nothing more */
        }
    }
}

int hp_boot_owns(const void *p)
{
    return (uintptr_t)p >= (uintptr_t)arena && (uintptr_t)p < (uintptr_t)arena + BOOT_SIZE;
}

size_t hp_boot_size(const void *p) { return (size_t)((const uint64_t *)p)[-1]; }

uint64_t hp_boot_bytes(void) { return __atomic_load_n(&bump, __ATOMIC_RELAXED); }
