/* Forks from a program whose threads allocate: THREADS threads (default 4) allocate and free
 * blocks of 1 to 5,000 bytes (each freeing what another left in a shared ring) while the main
 * thread forks N times (default 100); each child allocates, starts a thread, joins it and
 * leaves with _exit, and the parent waits for it. Prints the mean time of one fork and wait in
 * ms. Under the shim every child writes a profile of its own. Run by bench/forks.sh; by hand:
 *   gcc -O2 -pthread -o build/fork_busy bench/fork_busy.c && build/fork_busy [N [THREADS]] */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define RING 1024

static void *ring[RING];
static pthread_mutex_t ring_lock = PTHREAD_MUTEX_INITIALIZER;
static volatile int stop;

static void *churn(void *arg)
{
    unsigned s = (unsigned)(unsigned long)arg;
    while (!stop) {
        s = s * 1103515245u + 12345u;
        size_t size = (s >> 16) % 5000 + 1;
        void *p = malloc(size);
        if (p)
            memset(p, 0, size < 16 ? size : 16);
        pthread_mutex_lock(&ring_lock);
        void *old = ring[(s >> 8) % RING];
        ring[(s >> 8) % RING] = p;
        pthread_mutex_unlock(&ring_lock);
        free(old);
    }
    return NULL;
}

static void *child_thread(void *arg) { return malloc((size_t)(unsigned long)arg); }

static double now_ms(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec * 1e3 + t.tv_nsec / 1e6;
}

int main(int argc, char **argv)
{
    int n = argc > 1 ? atoi(argv[1]) : 100, nthreads = argc > 2 ? atoi(argv[2]) : 4;
    if (n < 1 || nthreads < 0 || nthreads > 64)
        return 2;
    pthread_t th[64];
    for (int i = 0; i < nthreads; i++)
        if (pthread_create(&th[i], NULL, churn, (void *)(unsigned long)(i + 1)) != 0)
            return 2;
    struct timespec settle = {0, 20 * 1000 * 1000};
    nanosleep(&settle, NULL);
    double t0 = now_ms();
    int bad = 0;
    for (int k = 0; k < n; k++) {
        pid_t pid = fork();
        if (pid < 0)
            return 2;
        if (pid == 0) {
            void *volatile p = malloc(100);
            free(p);
            pthread_t ct;
            void *r = NULL;
            if (pthread_create(&ct, NULL, child_thread, (void *)64ul) != 0 || pthread_join(ct, &r) != 0)
                _exit(3);
            free(r);
            _exit(0);
        }
        int st = 0;
        if (waitpid(pid, &st, 0) != pid || !WIFEXITED(st) || WEXITSTATUS(st) != 0)
            bad++;
    }
    double per = (now_ms() - t0) / n;
    stop = 1;
    for (int i = 0; i < nthreads; i++)
        pthread_join(th[i], NULL);
    for (int i = 0; i < RING; i++)
        free(ring[i]);
    printf("fork_busy: %d forks, %d threads: %.3f ms a fork and wait%s\n", n, nthreads, per,
           bad ? " (some children failed)" : "");
    return bad ? 1 : 0;
}
