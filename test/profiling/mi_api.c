/* Allocation sites that use mimalloc's own API (the program is linked with libmimalloc): each
 * site_* function makes a known number of blocks of known sizes, through mi_* functions,
 * heaps included, and the profile must count them like malloc's. Blocks are handed between
 * the two APIs (malloc's to mi_free, mimalloc's to free). */
#include <mimalloc.h>
#include <stdlib.h>
#include <string.h>

void *volatile sink;
static void *leaks[64];

/* 300 blocks of 1000 bytes, freed with mi_free. */
__attribute__((noinline)) void site_mi_malloc(void)
{
    for (int i = 0; i < 300; i++) {
        void *p = mi_malloc(1000);
        memset(p, 1, 1000);
        sink = p;
        mi_free(p);
    }
}

/* 100 blocks of 500 bytes with (p + 64) 256-byte aligned, zeroed, freed with free. */
__attribute__((noinline)) void site_mi_aligned_at(void)
{
    for (int i = 0; i < 100; i++) {
        void *p = mi_zalloc_aligned_at(500, 256, 64);
        sink = p;
        free(p);
    }
}

/* 200 malloc'd blocks of 100 bytes given back through mi_free_size. */
__attribute__((noinline)) void site_malloc_mi_free(void)
{
    for (int i = 0; i < 200; i++) {
        void *p = malloc(100);
        sink = p;
        mi_free_size(p, 100);
    }
}

/* One block grown by mi_rezalloc from 16 to 4096 bytes: 9 allocations, 8176 bytes, none live
 * after the last free. */
__attribute__((noinline)) void site_rezalloc(void)
{
    void *p = mi_zalloc(16);
    for (size_t n = 32; n <= 4096; n *= 2)
        p = mi_rezalloc(p, n);
    sink = p;
    free(p);
}

/* 50 copies of an 11-character string (12 bytes each), leaked. */
__attribute__((noinline)) void site_strdup_leak(void)
{
    for (int i = 0; i < 50; i++)
        leaks[i] = mi_strdup("eleven char");
}

/* 40 blocks of 250 bytes in a heap of their own, which is destroyed: none live after. */
__attribute__((noinline)) void site_heap_destroyed(mi_heap_t *h)
{
    for (int i = 0; i < 40; i++)
        sink = mi_heap_malloc(h, 250);
}

/* 30 zeroed blocks of 96 bytes in a heap that is deleted (its blocks live on): leaked. */
__attribute__((noinline)) void site_heap_deleted(mi_heap_t *h)
{
    for (int i = 0; i < 30; i++)
        sink = mi_heap_zalloc_aligned(h, 96, 64);
}

/* A deferred-free function of the program's frees blocks malloc made; mimalloc calls it from
 * inside its allocation slow path, here reached through the shim's own malloc. */
static void *volatile pending[64];
static volatile int npending;

static void deferred(bool force, unsigned long long heartbeat, void *arg)
{
    (void)force, (void)heartbeat, (void)arg;
    while (npending > 0)
        free(pending[--npending]);
}

/* 100,000 blocks of 100 bytes, none live after: those kept waiting are freed by deferred. */
__attribute__((noinline)) void site_deferred(void)
{
    for (int i = 0; i < 100000; i++) {
        void *p = malloc(100);
        if (npending < 64)
            pending[npending++] = p;
        else
            free(p);
    }
}

int main(void)
{
    site_mi_malloc();
    site_mi_aligned_at();
    site_malloc_mi_free();
    site_rezalloc();
    site_strdup_leak();
    mi_heap_t *h = mi_heap_new();
    site_heap_destroyed(h);
    mi_heap_destroy(h);
    mi_heap_t *h2 = mi_heap_new();
    site_heap_deleted(h2);
    mi_heap_delete(h2);
    mi_register_deferred_free(deferred, NULL);
    site_deferred();
    mi_collect(true);
    mi_register_deferred_free(NULL, NULL);
    sink = leaks;
    return 0;
}
