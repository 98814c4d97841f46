/* Many threads at once: 800 threads, all alive together (a barrier), each allocating 100
 * blocks of 40 + (i % 8) bytes from site_many and freeing them. The profile must count every
 * block, and the shim's metadata must stay far below its budget: per-thread tables start small
 * (a thousand full-size thread caches would take over a GiB). */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

#define THREADS 800
#define BLOCKS 100

static pthread_barrier_t all_started, all_done;
static void *volatile sink;

__attribute__((noinline)) static void *site_many(size_t size)
{
    void *p = malloc(size);
    sink = p;
    return p;
}

static void *thread_main(void *arg)
{
    long i = (long)arg;
    void *blocks[BLOCKS];
    pthread_barrier_wait(&all_started);
    for (int k = 0; k < BLOCKS; k++)
        blocks[k] = site_many(40 + (size_t)(i % 8));
    for (int k = 0; k < BLOCKS; k++)
        free(blocks[k]);
    pthread_barrier_wait(&all_done);
    return NULL;
}

int main(void)
{
    static pthread_t th[THREADS];
    pthread_attr_t attr;
    pthread_attr_init(&attr);
    pthread_attr_setstacksize(&attr, 128 << 10);
    pthread_barrier_init(&all_started, NULL, THREADS);
    pthread_barrier_init(&all_done, NULL, THREADS);
    for (long i = 0; i < THREADS; i++)
        if (pthread_create(&th[i], &attr, thread_main, (void *)i) != 0) {
            fprintf(stderr, "many_threads: cannot create thread %ld\n", i);
            return 1;
        }
    for (int i = 0; i < THREADS; i++)
        pthread_join(th[i], NULL);
    return 0;
}
