/* fork and exec from a threaded program: THREADS threads (default 8) each allocate and free one
 * block from 4,096 stacks of their own, then stay alive, their caches full, while the main
 * thread forks N times (default 50), each child exec'ing /bin/true at once, and waits for each.
 * Prints the mean time of one fork, exec and wait in ms. Under the shim a child that folded
 * every other thread's cache into the shared tables before the exec would write (and so copy)
 * their pages: it reads them instead (docs/DESIGN.md, "fork and exec"; docs/PERFORMANCE.md,
 * "Forks"). Not part of make bench;
 * build and run by hand, e.g.
 *   gcc -O1 -fno-omit-frame-pointer -pthread -o build/fork_threads bench/fork_threads.c
 *   build/fork_threads
 *   LD_PRELOAD=build/libheapprof_shim.so HEAPPROF_OPTIONS=output=/tmp/ft.%p.hpf build/fork_threads
 * Usage: fork_threads [N [THREADS]]. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define LEVELS 12 /* 4,096 stacks a thread */

static __thread void *volatile sink; /* the blocks escape: no compiler removes the pairs */
static pthread_barrier_t ready, done;

/* Bit d of v chooses which of two calls the stack goes through at level d. */
static __attribute__((noinline)) void level(unsigned v, int d)
{
    if (d == 0) {
        sink = malloc(16);
        free(sink);
        return;
    }
    if (v & 1)
        level(v >> 1, d - 1);
    else
        level(v >> 1, d - 1);
    __asm__ volatile(""); /* not a tail call: every level keeps its frame */
}

static void *worker(void *arg)
{
    (void)arg;
    for (unsigned v = 0; v < (1u << LEVELS); v++)
        level(v, LEVELS);
    pthread_barrier_wait(&ready);
    pthread_barrier_wait(&done);
    return NULL;
}

int main(int argc, char **argv)
{
    int n = argc > 1 ? atoi(argv[1]) : 50;
    int threads = argc > 2 ? atoi(argv[2]) : 8;
    if (n < 1 || threads < 1 || threads > 256) {
        fprintf(stderr, "usage: fork_threads [N [THREADS]] (THREADS 1..256)\n");
        return 2;
    }
    pthread_t th[256];
    pthread_barrier_init(&ready, NULL, (unsigned)threads + 1);
    pthread_barrier_init(&done, NULL, (unsigned)threads + 1);
    for (int i = 0; i < threads; i++)
        pthread_create(&th[i], NULL, worker, NULL);
    pthread_barrier_wait(&ready);
    struct timespec a, b;
    clock_gettime(CLOCK_MONOTONIC, &a);
    for (int i = 0; i < n; i++) {
        pid_t pid = fork();
        if (pid == 0) {
            execl("/bin/true", "true", (char *)NULL);
            _exit(127);
        }
        int st;
        if (pid < 0 || waitpid(pid, &st, 0) != pid || !WIFEXITED(st) || WEXITSTATUS(st) != 0) {
            fprintf(stderr, "fork_threads: child %d failed\n", i);
            return 1;
        }
    }
    clock_gettime(CLOCK_MONOTONIC, &b);
    printf("%.3f ms per fork, exec and wait\n",
           ((double)(b.tv_sec - a.tv_sec) * 1e3 + (double)(b.tv_nsec - a.tv_nsec) / 1e6) / n);
    pthread_barrier_wait(&done);
    for (int i = 0; i < threads; i++)
        pthread_join(th[i], NULL);
    return 0;
}
