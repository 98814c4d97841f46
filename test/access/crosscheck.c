/* The MemProf cross-check program: the known patterns of patterns.c on malloc'd blocks and
 * nothing else (no probe, no library), so LLVM's own runtime (llvm_crosscheck.sh) and heapprof
 * (phase 2) see the same program. Every block is allocated before any is freed: LLVM's
 * allocator clears a new block's shadow only over its size rounded down to 8 bytes from the
 * user pointer, one counter per 8 bytes of size (ClearShadow), so a reused chunk whose last
 * granule the block only partly covers keeps the previous occupant's counts there; fresh
 * memory has none. And no size is a multiple of 32: LLVM's GetShadowCount sums the counters
 * from the user pointer's to the one of user + size (not + size - 1), so a block ending on a
 * 64-byte boundary also gets its neighbour's first granule (with 32-byte aligned user
 * pointers, sizes not multiple of 32 never end there). Per block: every8 330, untouched 0,
 * readheavy 1717, memset 125, wide 16. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define BLOCKS 4
static volatile int blocks = BLOCKS; /* a loop of a known count would be unrolled: 4 contexts */

static void *volatile keep;
static void sink_fn(void *p) { (void)p; }
static void (*volatile sink)(void *) = sink_fn;

/* The allocation sites: one function each, so each is one context for both profilers. */
__attribute__((noinline)) static void *site_every8(void) { return keep = malloc(264); }
__attribute__((noinline)) static void *site_untouched(void) { return keep = malloc(1000); }
__attribute__((noinline)) static void *site_readheavy(void) { return keep = malloc(136); }
__attribute__((noinline)) static void *site_memset(void) { return keep = malloc(1000); }
__attribute__((noinline)) static void *site_wide(void) { return keep = malloc(264); }

/* 264 bytes, every 8th byte written 10 times: 330. */
__attribute__((noinline)) static void every8(volatile uint64_t *q)
{
    for (int r = 0; r < 10; r++)
        for (int i = 0; i < 33; i++)
            q[i] = (uint64_t)(r + i);
}

/* 136 bytes: 17 stores, 1700 loads. */
__attribute__((noinline)) static uint64_t readheavy(volatile uint64_t *q, int b)
{
    uint64_t sum = 0;
    for (int i = 0; i < 17; i++)
        q[i] = (uint64_t)(i + b);
    for (int r = 0; r < 100; r++)
        for (int i = 0; i < 17; i++)
            sum += q[i];
    return sum;
}

/* 264 bytes, the first 256 by 16-byte stores: 16. */
__attribute__((noinline)) static void wide(volatile unsigned __int128 *q, int b)
{
    for (int i = 0; i < 16; i++)
        q[i] = (unsigned __int128)i << 64 | (unsigned)b;
}

int main(void)
{
    void *p[5][BLOCKS];
    for (int b = 0; b < blocks; b++) {
        p[0][b] = site_every8();
        p[1][b] = site_untouched();
        p[2][b] = site_readheavy();
        p[3][b] = site_memset();
        p[4][b] = site_wide();
    }
    uint64_t sum = 0;
    for (int b = 0; b < blocks; b++) {
        every8(p[0][b]);
        sum += readheavy(p[2][b], b);
        memset(p[3][b], 'x' + b, 1000); /* 125; not 0, which could become calloc */
        wide(p[4][b], b);
    }
    for (int s = 0; s < 5; s++)
        for (int b = 0; b < blocks; b++) {
            sink(p[s][b]);
            free(p[s][b]);
        }
    /* stderr, unbuffered: a stdout buffer would be one more site in LLVM's profile */
    fprintf(stderr, "crosscheck %llu\n", (unsigned long long)sum);
    return 0;
}
