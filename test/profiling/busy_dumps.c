/* Dumps written while other threads allocate and free at full speed: four threads, each from
 * eight call sites with sizes of its own, for about a second, under dump_interval_ms. Every
 * dump must describe one moment: the summary's counts equal the sums over its contexts, and
 * allocations minus frees equal the live blocks. With the argument "shared" the threads
 * share one set of slots, so most blocks are freed by another thread than the one that
 * allocated them: a dump that took each thread's cache at a moment of its own could then
 * count the free of a block whose allocation it did not count. */
#include <pthread.h>
#include <stdlib.h>
#include <time.h>

#define NT 4
#define SLOTS 256

static volatile int stop;
static int shared;
void *volatile slots[NT][SLOTS];

#define SITE(k)                                                                                    \
    __attribute__((noinline)) void *busy_site##k(size_t n)                                         \
    {                                                                                              \
        void *p = malloc(n);                                                                       \
        __asm__ volatile("" ::: "memory");                                                         \
        return p;                                                                                  \
    }
SITE(0) SITE(1) SITE(2) SITE(3) SITE(4) SITE(5) SITE(6) SITE(7)

static void *(*const sites[8])(size_t) = {busy_site0, busy_site1, busy_site2, busy_site3,
                                          busy_site4, busy_site5, busy_site6, busy_site7};

static void *worker(void *arg)
{
    int t = (int)(long)arg;
    unsigned x = 12345u + (unsigned)t;
    while (!stop) {
        x = x * 1103515245u + 12345u;
        unsigned slot = (x >> 8) % (shared ? 8 : SLOTS); /* shared: blocks die young */
        void *p = sites[(x >> 20) & 7](16 + ((x >> 4) & 1023) + (size_t)t);
        /* The slot's block dies; the new one takes its place. */
        free(__atomic_exchange_n(&slots[shared ? 0 : t][slot], p, __ATOMIC_ACQ_REL));
    }
    return NULL;
}

int main(int argc, char **argv)
{
    shared = argc > 1 && argv[1][0] == 's';
    pthread_t th[NT];
    for (long t = 0; t < NT; t++)
        pthread_create(&th[t], NULL, worker, (void *)t);
    struct timespec ts = {1, 0};
    nanosleep(&ts, NULL);
    stop = 1;
    for (int t = 0; t < NT; t++)
        pthread_join(th[t], NULL);
    return 0;
}
