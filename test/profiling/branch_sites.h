/* Allocation sites several test programs share (sandbox.c, drop_privs.c, spool_copy.c): fixed
 * sites of known counts and sizes, and site_branches, which allocates from 2^level distinct
 * stacks (each level calls on from one of two call sites), to fill a small HIB table. Included
 * once per program; a program that does not use a site leaves it. */
#include <stdlib.h>

void *volatile sink;

__attribute__((noinline, unused)) static void site_before(void)
{
    for (int i = 0; i < 100; i++) {
        sink = malloc(100);
        free(sink);
    }
}

__attribute__((noinline, unused)) static void site_after(void)
{
    for (int i = 0; i < 50; i++) {
        sink = malloc(200);
        free(sink);
    }
}

__attribute__((noinline)) void site_branches(unsigned bits, int level);
__attribute__((noinline)) static void left(unsigned bits, int level) { site_branches(bits, level); __asm__ volatile(""); }
__attribute__((noinline)) static void right(unsigned bits, int level) { site_branches(bits, level); __asm__ volatile(""); }

__attribute__((noinline)) void site_branches(unsigned bits, int level)
{
    if (level == 0) {
        sink = malloc(64);
        free(sink);
        return;
    }
    if (bits & 1)
        right(bits >> 1, level - 1);
    else
        left(bits >> 1, level - 1);
}
