/* Busy, idle, busy: allocates and frees a block every 2 ms for about 300 ms, does nothing for
 * 600 ms, then allocates again for about 300 ms. Under dump_interval_ms=100 the busy stretches
 * leave interval dumps and the idle one at most one (the first tick after the last change):
 * no two numbered dumps in a row may hold the same totals. */
#include <stdlib.h>
#include <string.h>
#include <time.h>

static void *volatile keep[16];

static void busy(int rounds, unsigned salt)
{
    struct timespec pause = {0, 2 * 1000 * 1000};
    for (int i = 0; i < rounds; i++) {
        unsigned k = (unsigned)i % 16;
        free(keep[k]);
        keep[k] = malloc(64 + ((unsigned)i * 7 + salt) % 512);
        if (keep[k])
            memset(keep[k], 1, 64);
        nanosleep(&pause, NULL);
    }
}

int main(void)
{
    busy(150, 1);
    struct timespec idle = {0, 600 * 1000 * 1000};
    nanosleep(&idle, NULL);
    busy(150, 2);
    for (int k = 0; k < 16; k++)
        free(keep[k]);
    return 0;
}
