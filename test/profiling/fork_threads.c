/* Forks while four other threads are alive with what they did still in their caches: 1,000
 * blocks each freed at site_worker_freed (HIBs), 25 each still live at site_worker_live, and
 * the 50 blocks the main thread allocated at site_handoff freed by worker 0. A forked child
 * keeps the other threads' counters and HIBs, and must count each exactly once in every
 * profile it writes:
 *   child "dump": allocates at site_child and site_handoff, dumps through the API twice (the
 *     first folds the other threads' caches and hands them to the child's new threads, the
 *     second must not hand them out again), then runs six threads of its own at once, each
 *     allocating 20,000 blocks at site_child_thread with another thread's block freed among them
 *     (on the folded caches: unit test test_fork_orphans_reused_once checks that each serves
 *     one thread), then exits;
 *   child "fork": forks a grandchild that allocates at site_child and exits, then exits;
 *   child "exec": execs ARGV[1] (/bin/true under the shim: its own profile, nothing else).
 * The parent lets the workers free their live blocks after the children and exits.
 * Prints "role PID" for itself (parent) and each process it made, then "fork_threads done". */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include "heapprof.h"

#define NOINLINE __attribute__((noinline))
#define WORKERS 4

void *volatile sink;
static pthread_barrier_t ready, go;
static void *handoff[50];
static void *live[WORKERS][25];

NOINLINE void site_worker_freed(void)
{
    for (int i = 0; i < 1000; i++) {
        void *p = malloc(48);
        sink = p;
        free(p);
    }
}

NOINLINE void site_worker_live(void **out)
{
    for (int i = 0; i < 25; i++)
        out[i] = malloc(1000);
}

NOINLINE void site_handoff(void **out, int n)
{
    for (int i = 0; i < n; i++)
        out[i] = malloc(100);
}

NOINLINE void site_child(void)
{
    for (int i = 0; i < 7; i++) {
        void *p = malloc(777);
        sink = p;
        free(p);
    }
}

#define CHILD_THREADS 6
#define CHILD_BLOCKS 20000
static void *child_prev[CHILD_THREADS];
static pthread_barrier_t child_go;

NOINLINE void *site_child_thread(void)
{
    void *p = malloc(64);
    sink = p; /* (not a tail call: the frame stays) */
    return p;
}

static void *child_worker(void *arg)
{
    int k = (int)(long)arg;
    pthread_barrier_wait(&child_go);
    for (int i = 0; i < CHILD_BLOCKS; i++) {
        void *p = site_child_thread();
        /* swap blocks with the thread next door: frees of another cache's blocks */
        p = __atomic_exchange_n(&child_prev[(k + i) % CHILD_THREADS], p, __ATOMIC_ACQ_REL);
        free(p);
    }
    return NULL;
}

static void *worker(void *arg)
{
    int k = (int)(long)arg;
    site_worker_freed();
    site_worker_live(live[k]);
    if (k == 0)
        for (int i = 0; i < 50; i++)
            free(handoff[i]);
    pthread_barrier_wait(&ready);
    pthread_barrier_wait(&go); /* alive, caches unflushed, while the main thread forks */
    for (int i = 0; i < 25; i++)
        free(live[k][i]);
    return NULL;
}

static int wait_ok(pid_t pid)
{
    int st;
    return waitpid(pid, &st, 0) == pid && WIFEXITED(st) && WEXITSTATUS(st) == 0;
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: fork_threads PROGRAM-TO-EXEC\n");
        return 2;
    }
    printf("parent %d\n", (int)getpid());
    void *one[1];
    /* Round 0 in the parent; round 1 only in the child "dump", so that its block comes from
     * the very stack of the parent's 50. */
    for (volatile int round = 0;; round++) { /* (volatile: one call site, not one per round) */
        site_handoff(round ? one : handoff, round ? 1 : 50);
        if (round)
            break;
        pthread_barrier_init(&ready, NULL, WORKERS + 1);
        pthread_barrier_init(&go, NULL, WORKERS + 1);
        pthread_t th[WORKERS];
        for (long k = 0; k < WORKERS; k++)
            pthread_create(&th[k], NULL, worker, (void *)k);
        pthread_barrier_wait(&ready);
        int ok = 1;

        fflush(stdout); /* (before every fork: the children exit through exit()) */
        pid_t pid = fork();
        if (pid == 0)
            continue;
        printf("dump %d\n", (int)pid);
        ok &= wait_ok(pid);

        fflush(stdout);
        pid = fork();
        if (pid == 0) {
            pid_t g = fork();
            if (g == 0) {
                site_child();
                exit(0);
            }
            printf("grandchild %d\n", (int)g);
            exit(wait_ok(g) ? 0 : 4);
        }
        printf("fork %d\n", (int)pid);
        ok &= wait_ok(pid);

        fflush(stdout);
        pid = fork();
        if (pid == 0) {
            execl(argv[1], argv[1], (char *)NULL);
            _exit(127);
        }
        printf("exec %d\n", (int)pid);
        ok &= wait_ok(pid);

        pthread_barrier_wait(&go);
        for (int k = 0; k < WORKERS; k++)
            pthread_join(th[k], NULL);
        printf(ok ? "fork_threads done\n" : "fork_threads: a child failed\n");
        return ok ? 0 : 1;
    }
    /* The child "dump". */
    site_child();
    if (heapprof_dump && (heapprof_dump() != 0 || heapprof_dump() != 0))
        _exit(3);
    pthread_barrier_init(&child_go, NULL, CHILD_THREADS);
    pthread_t th[CHILD_THREADS];
    for (long k = 0; k < CHILD_THREADS; k++)
        pthread_create(&th[k], NULL, child_worker, (void *)k);
    for (int k = 0; k < CHILD_THREADS; k++)
        pthread_join(th[k], NULL);
    for (int k = 0; k < CHILD_THREADS; k++)
        free(child_prev[k]);
    exit(0);
}
