/* The exit profile while an interval dump is being written: with dump_interval_ms=1 a dump is
 * nearly always in progress, and the exit must wait for it rather than give up its own
 * profile. Four sites at many recursion depths make a few hundred contexts, so each dump
 * takes a while. cases/exit-race.sh runs this ten times; every run must leave its exit profile. */
#include <stdlib.h>

static void *volatile sink;

#define SITE(n)                                                                              \
    __attribute__((noinline)) static void site_##n(int depth)                                \
    {                                                                                        \
        if (depth) {                                                                         \
            site_##n(depth - 1);                                                             \
            sink = 0;                                                                        \
            return;                                                                          \
        }                                                                                    \
        sink = malloc(10 + n);                                                               \
    }
SITE(0)
SITE(1)
SITE(2)
SITE(3)

int main(void)
{
    for (int i = 0; i < 3000; i++) {
        site_0(i % 50);
        site_1(i % 37);
        site_2(i % 23);
        site_3(i % 11);
    }
    return 0;
}
