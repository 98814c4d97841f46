/* The OOM killer's way out: the heap grows to 20 blocks of 1 MiB (site_big), shrinks, and the
 * process is killed with SIGKILL, which leaves no exit profile. With dump_peak_growth=50 the
 * shim has written <output>.peak at every 50% of growth from 1 MiB (at 1, 2, 3, 5, 8, 12 and
 * 18 blocks; the next would be at 27): the last one holds 18 blocks live. */
#include <signal.h>
#include <stdlib.h>

static void *volatile keep[20];

__attribute__((noinline)) void site_big(int i) { keep[i] = malloc(1 << 20); }

int main(void)
{
    for (int i = 0; i < 20; i++)
        site_big(i);
    for (int i = 0; i < 20; i++)
        free(keep[i]);
    raise(SIGKILL);
    return 0;
}
