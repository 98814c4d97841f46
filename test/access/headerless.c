/* Access profiling of blocks without headers: this program is built with heapprof-cc and linked
 * with an allocator of its own (test/profiling/own_malloc.c, built plainly), which the shim
 * profiles without headers (backend/, "Headers or not"). own_malloc's blocks of one size class
 * start 16 bytes into slots of 128 or 256 bytes, so no two blocks share a 64-byte granule and
 * the counts are exact (test/profiling/cases/access-headerless.sh): site_both writes, then
 * reads, every 8th byte of its 100-byte blocks (12 writes and 12 reads, both granules of its
 * block touched), site_one writes the first byte of its 200-byte blocks (one access, one of the
 * four granules from its slot's start to its end). */
#include <stdio.h>
#include <stdlib.h>

#define N 8
static volatile int blocks = N; /* a count clang cannot unroll into N call sites */
static void *volatile keep;
static volatile unsigned sum;

__attribute__((noinline)) static void site_both(void)
{
    for (int i = 0; i < blocks; i++) {
        volatile unsigned char *p = malloc(100);
        keep = (void *)p;
        for (int k = 0; k < 96; k += 8)
            p[k] = (unsigned char)k;
        for (int k = 0; k < 96; k += 8)
            sum += p[k];
        free((void *)p);
    }
}

__attribute__((noinline)) static void site_one(void)
{
    for (int i = 0; i < blocks; i++) {
        volatile unsigned char *p = malloc(200);
        keep = (void *)p;
        p[0] = 1;
        free((void *)p);
    }
}

extern unsigned long own_malloc_calls;

int main(void)
{
    site_both();
    site_one();
    printf("sum %u, own allocator used: %s\n", sum, own_malloc_calls >= 2 * N ? "yes" : "no");
    return 0;
}
