/* Allocation calls that succeed leave errno as it was, as free always does, under every unwinder
 * (libunwind's checks of addresses read from a non-blocking pipe and left EAGAIN behind): every
 * call of the allocation API, in the main thread and in another, while dumps are asked for by
 * signal (run with dump_signal=12) and through heapprof_dump(). Prints "errno kept", or a line per
 * call that changed errno and exits 1. */
#define _GNU_SOURCE
#include <errno.h>
#include <malloc.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>

#include "heapprof.h"

#define MARK 1234

static void *volatile sink;
static int bad;

#define KEPT(expr)                                                                     \
    do {                                                                               \
        errno = MARK;                                                                  \
        expr;                                                                          \
        if (errno != MARK && bad++ < 20)                                               \
            printf("errno %d after %s (line %d)\n", errno, #expr, __LINE__);          \
    } while (0)

__attribute__((noinline)) static void site_errno(int i)
{
    void *p = NULL;
    KEPT(sink = malloc((size_t)i * 7 + 1));
    KEPT(sink = realloc(sink, (size_t)i * 13 + 5));
    KEPT(free(sink));
    KEPT(sink = calloc(3, (size_t)i + 1));
    KEPT(free(sink));
    KEPT(posix_memalign(&p, 64, (size_t)i + 1));
    sink = p;
    KEPT(free(sink));
    KEPT(sink = aligned_alloc(4096, 4096));
    KEPT(malloc_usable_size(sink));
    KEPT(free(sink));
    KEPT(sink = memalign(128, (size_t)i + 100));
    KEPT(free(sink));
    KEPT(sink = valloc(100));
    KEPT(free(sink));
    KEPT(sink = malloc(1 << 20));
    KEPT(free(sink));
    KEPT(sink = reallocarray(NULL, 10, (size_t)i + 1));
    KEPT(free(sink));
    KEPT(free(NULL));
}

static void *other(void *arg)
{
    (void)arg;
    for (int i = 0; i < 500; i++)
        site_errno(i);
    return NULL;
}

int main(void)
{
    for (int i = 0; i < 2000; i++) {
        site_errno(i);
        if (i % 500 == 250)
            raise(SIGUSR2); /* dump_signal=12 */
        if (i % 500 == 499 && heapprof_dump)
            heapprof_dump();
    }
    pthread_t t;
    if (pthread_create(&t, NULL, other, NULL) == 0)
        pthread_join(t, NULL);
    puts(bad ? "errno changed" : "errno kept");
    return bad != 0;
}
