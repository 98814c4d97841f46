/* A program whose allocations each fall into one section of the text report: 1000 blocks of
 * 40 B freed at once (temporary), 10 blocks of 3000 B held 50 ms (freed), 5 blocks of 1 MiB never
 * freed (leaked, the largest at the peak). Blocks escape through a volatile global. */
#include <stdlib.h>
#include <string.h>
#include <time.h>

void *volatile sink;

__attribute__((noinline)) static void temporary(void)
{
    for (int i = 0; i < 1000; i++) {
        sink = malloc(40);
        free(sink);
    }
}

__attribute__((noinline)) static void held(void)
{
    void *b[10];
    for (int i = 0; i < 10; i++)
        b[i] = sink = malloc(3000);
    struct timespec ts = {0, 50 * 1000 * 1000};
    nanosleep(&ts, NULL);
    for (int i = 0; i < 10; i++)
        free(b[i]);
}

static void *leaks[5];

__attribute__((noinline)) static void leak(void)
{
    for (int i = 0; i < 5; i++) {
        leaks[i] = sink = malloc(1 << 20);
        memset(leaks[i], 1, 64);
    }
}

int main(void)
{
    temporary();
    held();
    leak();
    return 0;
}
