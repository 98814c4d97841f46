/* Cost of an allocation and its free through malloc/free and through mimalloc's own
 * mi_malloc/mi_free, in a program linked with libmimalloc (docs/PERFORMANCE.md, "Current
 * figures"). Not part of make bench; build and run by hand:
 *   gcc -O2 -o build/mi_pairs bench/mi_pairs.c -lmimalloc
 *   build/mi_pairs; LD_PRELOAD=build/libheapprof_shim.so HEAPPROF_OPTIONS=output= build/mi_pairs */
#include <mimalloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#define PAIRS 2000000

static void *volatile sink; /* the blocks escape: no compiler removes the pairs */

static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

int main(void)
{
    double t0 = now();
    for (int i = 0; i < PAIRS; i++) {
        void *p = malloc(32 + (size_t)(i % 200));
        sink = p;
        free(p);
    }
    double t1 = now();
    for (int i = 0; i < PAIRS; i++) {
        void *p = mi_malloc(32 + (size_t)(i % 200));
        sink = p;
        mi_free(p);
    }
    double t2 = now();
    printf("malloc+free %.1f ns, mi_malloc+mi_free %.1f ns\n", (t1 - t0) / PAIRS * 1e9,
           (t2 - t1) / PAIRS * 1e9);
    return 0;
}
