/* One allocation site at the bottom of a recursion DEPTH frames deep, allocated from and freed
 * over and over: the cost of the site cache's hit on a deep stack (every allocation has the
 * same stack, so each one checks all of its return-address slots), docs/PERFORMANCE.md
 * ("Programs run by hand"). Not part of make bench; build and run by hand, e.g.
 *   gcc -O2 -fomit-frame-pointer -o build/deep_stack bench/deep_stack.c
 *   AB_CMD="build/deep_stack 40" sh bench/ab.sh bare build/libheapprof_shim.so
 * Usage: deep_stack [DEPTH [ROUNDS]]: ROUNDS (default 3000) times 1,000 pairs at DEPTH
 * (default 20) frames below main. */
#include <stdio.h>
#include <stdlib.h>

static void *volatile sink; /* the blocks escape: no compiler removes the pairs */

static __attribute__((noinline)) void leaf(int n)
{
    for (int i = 0; i < n; i++) {
        sink = malloc(48);
        free(sink);
    }
}

static __attribute__((noinline)) void down(int depth, int n)
{
    if (depth == 0)
        leaf(n);
    else
        down(depth - 1, n);
    __asm__ volatile(""); /* not a tail call: every level keeps its frame */
}

int main(int argc, char **argv)
{
    int depth = argc > 1 ? atoi(argv[1]) : 20;
    int rounds = argc > 2 ? atoi(argv[2]) : 3000;
    if (depth < 0 || depth > 10000 || rounds < 0) {
        fprintf(stderr, "usage: deep_stack [DEPTH [ROUNDS]]\n");
        return 2;
    }
    for (int r = 0; r < rounds; r++)
        down(depth, 1000);
    puts("ok");
    return 0;
}
