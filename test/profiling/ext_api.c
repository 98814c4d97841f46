/* Allocation sites that use jemalloc's own API (the program is linked with jemalloc): each
 * site_* function makes a known number of blocks of known sizes, freed or leaked through
 * mallocx/rallocx/dallocx/sdallocx, and the profile must count them like malloc's. */
#include <jemalloc/jemalloc.h>
#include <stdlib.h>
#include <string.h>

void *volatile sink;
static void *leaks[40];

/* 300 blocks of 1000 bytes, 64-byte aligned, freed with sdallocx. */
__attribute__((noinline)) void site_mallocx(void)
{
    for (int i = 0; i < 300; i++) {
        void *p = mallocx(1000, MALLOCX_ALIGN(64));
        memset(p, 1, 1000);
        sink = p;
        sdallocx(p, 1000, MALLOCX_ALIGN(64));
    }
}

/* 40 blocks of 500 bytes in an arena of the program's, leaked. */
__attribute__((noinline)) void site_arena_leak(unsigned arena)
{
    for (int i = 0; i < 40; i++)
        leaks[i] = mallocx(500, MALLOCX_ARENA(arena) | MALLOCX_TCACHE_NONE);
}

/* One block grown by rallocx from 16 to 4096 bytes: 9 allocations, 8176 bytes, none live
 * after the last free. */
__attribute__((noinline)) void site_rallocx(void)
{
    void *p = mallocx(16, 0);
    for (size_t n = 32; n <= 4096; n *= 2)
        p = rallocx(p, n, MALLOCX_ZERO | MALLOCX_ALIGN(64));
    sink = p;
    dallocx(p, 0);
}

/* 200 malloc'd blocks of 100 bytes given back through dallocx. */
__attribute__((noinline)) void site_malloc_dallocx(void)
{
    for (int i = 0; i < 200; i++) {
        void *p = malloc(100);
        sink = p;
        dallocx(p, MALLOCX_TCACHE_NONE);
    }
}

int main(void)
{
    unsigned arena;
    size_t sz = sizeof arena;
    if (mallctl("arenas.create", &arena, &sz, NULL, 0) != 0)
        return 1;
    site_mallocx();
    site_arena_leak(arena);
    site_rallocx();
    site_malloc_dallocx();
    sink = leaks;
    return 0;
}
