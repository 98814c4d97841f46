/* Every allocation from a call stack of its own: N stacks (default 131,072) that share their
 * PREFIX outermost frames (a recursion, default 40) and part in the 17 below it, each allocating
 * and freeing one 32-byte block. Twice the default HIB table's contexts: half of them are
 * evicted to the spool, and the exit dump sorts 131,072 deep stacks into the frame tree. It
 * prints the wall-clock time (CLOCK_REALTIME, seconds) when main returns, so the time the exit
 * dump takes is the process's end less that (docs/PERFORMANCE.md, "Dumps"). Not part of make
 * bench; build and run by hand, e.g.
 *   gcc -O2 -fno-omit-frame-pointer -o build/many_contexts bench/many_contexts.c
 *   LD_PRELOAD=build/libheapprof_shim.so HEAPPROF_OPTIONS=stack_depth=128 build/many_contexts
 * Usage: many_contexts [PREFIX [N]]; N at most 131,072. */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#define BITS 17

static void *volatile sink; /* the blocks escape: no compiler removes the pairs */

static void pick(unsigned v, int k);

/* Bit k of v chooses which of two frames the stack goes through at level k. */
static __attribute__((noinline)) void via0(unsigned v, int k)
{
    pick(v, k + 1);
    __asm__ volatile(""); /* not a tail call: every level keeps its frame */
}

static __attribute__((noinline)) void via1(unsigned v, int k)
{
    pick(v, k + 1);
    __asm__ volatile("");
}

static __attribute__((noinline)) void pick(unsigned v, int k)
{
    if (k == BITS) {
        sink = malloc(32);
        free(sink);
        return;
    }
    if ((v >> k) & 1)
        via1(v, k);
    else
        via0(v, k);
    __asm__ volatile("");
}

static __attribute__((noinline)) void down(int depth, unsigned v)
{
    if (depth == 0)
        pick(v, 0);
    else
        down(depth - 1, v);
    __asm__ volatile("");
}

int main(int argc, char **argv)
{
    int prefix = argc > 1 ? atoi(argv[1]) : 40;
    long n = argc > 2 ? atol(argv[2]) : 1L << BITS;
    if (prefix < 0 || prefix > 10000 || n < 0 || n > 1L << BITS) {
        fprintf(stderr, "usage: many_contexts [PREFIX [N]]  (N at most %ld)\n", 1L << BITS);
        return 2;
    }
    for (long v = 0; v < n; v++)
        down(prefix, (unsigned)v);
    struct timespec t;
    clock_gettime(CLOCK_REALTIME, &t);
    printf("main done %ld.%09ld\n", (long)t.tv_sec, t.tv_nsec);
    return 0;
}
