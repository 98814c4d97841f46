/* The registry of live blocks (shim/shadow/live.c) under threads and dumps: 4 threads each
 * allocate 20,000 blocks of 128 bytes at one site and write every 8th byte of each (16
 * stores), then hand every other block to the next thread through a queue, which reads it (16
 * loads) and frees it; the rest they read and free themselves. Blocks are freed by other
 * threads than their own half of the time, so registry slots move between threads, while the
 * shim dumps every few milliseconds (dump_interval_ms, set by the case) and reads the registry.
 * The exit profile must hold, at site_make, 80,000 blocks of 32 accesses each, none live
 * (test/profiling/cases/access-threads.sh). */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#define THREADS 4
#define PER_THREAD 20000
#define WORDS 16

struct queue {
    pthread_mutex_t lock;
    volatile uint64_t *items[PER_THREAD];
    int head, tail;
};

static struct queue queues[THREADS];
static volatile int per_thread = PER_THREAD; /* a count clang cannot unroll */
static volatile uint64_t sum;

__attribute__((noinline)) static volatile uint64_t *site_make(int t, int i)
{
    volatile uint64_t *q = malloc(WORDS * sizeof(uint64_t));
    for (int w = 0; w < WORDS; w++)
        q[w] = (uint64_t)(t + i + w);
    return q;
}

static void use_and_free(volatile uint64_t *q)
{
    uint64_t s = 0;
    for (int w = 0; w < WORDS; w++)
        s += q[w];
    __atomic_add_fetch(&sum, s, __ATOMIC_RELAXED);
    free((void *)q);
}

static volatile uint64_t *take(struct queue *qu)
{
    volatile uint64_t *q = NULL;
    pthread_mutex_lock(&qu->lock);
    if (qu->head != qu->tail)
        q = qu->items[qu->head++];
    pthread_mutex_unlock(&qu->lock);
    return q;
}

static void *worker(void *arg)
{
    int t = (int)(intptr_t)arg;
    struct queue *out = &queues[(t + 1) % THREADS], *in = &queues[t];
    int got = 0, want = per_thread / 2;
    for (int i = 0; i < per_thread; i++) {
        volatile uint64_t *q = site_make(t, i);
        if (i & 1) {
            use_and_free(q);
        } else {
            pthread_mutex_lock(&out->lock);
            out->items[out->tail++] = q;
            pthread_mutex_unlock(&out->lock);
        }
        volatile uint64_t *r = take(in);
        if (r) {
            use_and_free(r);
            got++;
        }
    }
    while (got < want) {
        volatile uint64_t *r = take(in);
        if (r) {
            use_and_free(r);
            got++;
        }
    }
    return NULL;
}

int main(void)
{
    pthread_t th[THREADS];
    for (int t = 0; t < THREADS; t++)
        pthread_mutex_init(&queues[t].lock, NULL);
    for (int t = 0; t < THREADS; t++)
        pthread_create(&th[t], NULL, worker, (void *)(intptr_t)t);
    for (int t = 0; t < THREADS; t++)
        pthread_join(th[t], NULL);
    printf("threads sum %llu\n", (unsigned long long)sum);
    return 0;
}
