/* Read-modify-write accesses, counted per mode (test/profiling/cases/access-rmw.sh): site_rmw's
 * blocks have each of their 16 words incremented 10 times (p[i] += x: a load and a store of one
 * address, volatile so that every one is made), then one more load; site_store's 16 words are
 * stored 10 times, with no load. clang and gcc's ThreadSanitizer instrumentation count every
 * load and store; gcc's asan instrumentation (heapprof-cc's for a gcc before 10) checks an
 * address once in a stretch of code where nothing could free it, so the store of p[i] += x
 * goes uncounted (USAGE.md, Limits). */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

static void *volatile keep;
static volatile int blocks = 8;

__attribute__((noinline)) static uint64_t site_rmw(void)
{
    uint64_t sum = 0;
    for (int b = 0; b < blocks; b++) {
        volatile uint64_t *p = calloc(16, sizeof *p);
        keep = (void *)p;
        for (int r = 0; r < 10; r++)
            for (int i = 0; i < 16; i++)
                p[i] += (uint64_t)(r ^ i);
        sum += p[b & 15]; /* one more load a block */
        free(keep);
    }
    return sum;
}

__attribute__((noinline)) static void site_store(void)
{
    for (int b = 0; b < blocks; b++) {
        volatile uint64_t *p = malloc(16 * sizeof *p);
        keep = (void *)p;
        for (int r = 0; r < 10; r++)
            for (int i = 0; i < 16; i++)
                p[i] = (uint64_t)(r + i);
        free(keep);
    }
}

int main(void)
{
    uint64_t s = site_rmw();
    site_store();
    printf("rmw %llu\n", (unsigned long long)s);
    return 0;
}
