/* Blocks still live at a dump: their access counts are read from the shadow at each dump
 * without clearing them (a later dump sees what came since, added). Built with heapprof-cc; run
 * under the shim (run.sh checks both profiles):
 *   3 blocks of 256 bytes on a 64-byte boundary (4 granules each), every 8th byte written once
 *   (32 stores a block), then heapprof_dump(): 96 accesses (96 writes in callback modes), every
 *   block 100% used, 24 accesses in each of the 4 granules;
 *   then every 8th byte read once (32 loads a block), and the exit profile: 192 accesses (still
 *   96 writes), 48 in each granule. */
#include "heapprof.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#define N 3
static volatile uint64_t *volatile blocks[N];

__attribute__((noinline)) static void site_live(void)
{
    for (int b = 0; b < N; b++) {
        volatile uint64_t *q = aligned_alloc(64, 256);
        blocks[b] = q;
        for (int i = 0; i < 32; i++)
            q[i] = (uint64_t)(i + b);
    }
}

int main(void)
{
    site_live();
    if (heapprof_dump)
        heapprof_dump();
    uint64_t sum = 0;
    for (int b = 0; b < N; b++)
        for (int i = 0; i < 32; i++)
            sum += blocks[b][i];
    printf("live sum %llu\n", (unsigned long long)sum);
    return 0;
}
