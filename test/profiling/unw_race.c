/* unwinder=libunwind in a program whose first allocations are made by threads that start at
 * once: the shim loads libunwind at the first of them (when preloaded, not before libc is
 * initialised), and the others wait for the load instead of recording frame-pointer stacks,
 * one frame deep in code built without frame pointers (each site then split in two contexts).
 * main allocates nothing itself before the threads run. */
#include <pthread.h>
#include <stdlib.h>

#define NT 4

static pthread_barrier_t go;
void *volatile keep[NT][200];

__attribute__((noinline)) void *site_unw_thread(size_t n)
{
    void *p = malloc(n);
    __asm__ volatile("" ::: "memory");
    return p;
}

static void *worker(void *arg)
{
    long t = (long)arg;
    pthread_barrier_wait(&go);
    for (int i = 0; i < 200; i++)
        keep[t][i] = site_unw_thread(100);
    for (int i = 0; i < 200; i++)
        free(keep[t][i]);
    return NULL;
}

int main(void)
{
    pthread_t th[NT];
    pthread_barrier_init(&go, NULL, NT);
    for (long t = 0; t < NT; t++)
        pthread_create(&th[t], NULL, worker, (void *)t);
    for (int t = 0; t < NT; t++)
        pthread_join(th[t], NULL);
    return 0;
}
