/* Built with a sanitizer: gcc's address, thread or leak (runtimes as shared libraries, which
 * must come first: heapprof-run preloads them before the shim), clang's address, thread,
 * memory or leak (runtime linked into the program). Two threads, three times over,
 * each allocate and free 1,000 blocks of 64 bytes in site_worker; main leaks nothing. The run
 * must end as it does bare (status 0, no sanitizer report: the shim's own metadata writes must
 * not look like races to ThreadSanitizer) with exact counts. */
#include <pthread.h>
#include <stdlib.h>

static __thread void *volatile sink;

__attribute__((noinline)) void site_worker(void)
{
    for (int i = 0; i < 1000; i++) {
        sink = malloc(64);
        free(sink);
    }
}

static void *worker(void *arg)
{
    site_worker();
    return arg;
}

int main(void)
{
    for (int round = 0; round < 3; round++) {
        pthread_t t[2];
        for (int i = 0; i < 2; i++)
            if (pthread_create(&t[i], NULL, worker, NULL) != 0)
                return 1;
        for (int i = 0; i < 2; i++)
            pthread_join(t[i], NULL);
    }
    return 0;
}
