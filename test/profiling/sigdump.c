/* heapprof_dump() from a signal handler: a 1 ms timer calls it while the program allocates in a
 * loop, so many signals land while the thread is inside the shim holding its locks. Every call
 * must return (a dump asked for there is written when the interrupted call finishes), the
 * program must finish, and the exit profile must count every allocation. */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/time.h>

#include "heapprof.h"

#define LOOPS 2048000 /* a multiple of 256: every size as often */

static volatile sig_atomic_t asked;
static void *volatile sink;

static void on_alarm(int sig)
{
    (void)sig;
    if (heapprof_dump && heapprof_dump() == 0)
        asked++;
}

__attribute__((noinline)) static void *site_loop(size_t size)
{
    void *p = malloc(size);
    sink = p;
    return p;
}

int main(void)
{
    signal(SIGALRM, on_alarm);
    struct itimerval on = {{0, 1000}, {0, 1000}}, off = {{0, 0}, {0, 0}};
    setitimer(ITIMER_REAL, &on, NULL);
    for (long i = 0; i < LOOPS; i++)
        free(site_loop(16 + (size_t)(i & 255)));
    setitimer(ITIMER_REAL, &off, NULL);
    printf("sigdump: %d dumps asked\n", (int)asked);
    return 0;
}
