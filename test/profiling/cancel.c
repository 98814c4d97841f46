/* Threads cancelled while dumps run. Each round starts a worker that allocates and frees 48-byte
 * blocks from site_cancel through 4,096 different call paths (rec), with a cancellation point
 * of its own after every block (pthread_testcancel), while the main thread writes dumps through
 * heapprof_dump(); then the main thread cancels the worker and joins it. With a small thread
 * cache (run it with thread_cache_size=16) the worker keeps moving entries out of its cache,
 * and while a dump is written it waits inside the shim for the dump to end. That wait must not
 * be a cancellation point: a worker cancelled there died holding its cache's lock, and its own
 * exit, the next dump and the exit dump then waited for that lock forever.
 * Prints "blocks N": how many blocks the workers allocated (and freed) in all. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "heapprof.h"

#define ROUNDS 40
#define DEPTH 12

static void *volatile sink;
static volatile unsigned long blocks, spin;

__attribute__((noinline)) static void site_cancel(void)
{
    void *p = malloc(48);
    sink = p;
    free(p);
    blocks++; /* before the worker's next cancellation point: the count stays exact */
}

/* Two call sites per level: bits picks the path, so 2^DEPTH different stacks reach site_cancel. */
__attribute__((noinline)) static void rec(int n, unsigned bits)
{
    if (n == 0) {
        site_cancel();
        return;
    }
    if (bits & 1) {
        rec(n - 1, bits >> 1);
        spin++;
    } else {
        rec(n - 1, bits >> 1);
        spin += 2;
    }
}

static void *worker(void *arg)
{
    (void)arg;
    for (unsigned i = 0;; i++) {
        rec(DEPTH, i & ((1u << DEPTH) - 1));
        pthread_testcancel();
    }
    return NULL;
}

int main(void)
{
    for (int round = 0; round < ROUNDS; round++) {
        pthread_t th;
        if (pthread_create(&th, NULL, worker, NULL) != 0) {
            perror("pthread_create");
            return 1;
        }
        struct timespec ts = {0, 2000000};
        nanosleep(&ts, NULL);
        for (int k = 0; k < 3; k++)
            if (heapprof_dump)
                heapprof_dump();
        pthread_cancel(th);
        void *res;
        pthread_join(th, &res);
        if (res != PTHREAD_CANCELED) {
            fprintf(stderr, "worker %d was not cancelled\n", round);
            return 1;
        }
    }
    printf("blocks %lu\n", blocks);
    return 0;
}
