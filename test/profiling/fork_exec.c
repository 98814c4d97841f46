/* A threaded program whose HIB table is full (run with a tiny hib_table_size) forks while its
 * threads hold cached HIBs, and the child execs at once: folding those caches in the child
 * evicts records, and the profile file they would open belongs to an image that is about to
 * be replaced. Only the parent's profile and the exec'd program's may be left, both complete.
 * With an argument N, the main thread first goes through N rounds of 16 new contexts (up to
 * 2,048), forking and exec'ing after each: by then the parent has a spool file and any number
 * of evicted records waiting in memory, and a child must still not make a file of its own. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

static pthread_barrier_t forked, done;
void *volatile sink;

/* A different stack for each depth: 40 contexts. */
__attribute__((noinline)) static void nest(int d)
{
    if (d > 0) {
        nest(d - 1);
        sink = (void *)&d; /* no tail call */
        return;
    }
    void *p = malloc(64);
    sink = p;
    free(p);
}

static void pick(unsigned v, int k);

/* Bit k of v chooses the frame at level k: 2,048 stacks from 11 levels. */
__attribute__((noinline)) static void via0(unsigned v, int k)
{
    pick(v, k + 1);
    sink = (void *)&v; /* no tail call */
}

__attribute__((noinline)) static void via1(unsigned v, int k)
{
    pick(v, k + 1);
    sink = (void *)&v;
}

__attribute__((noinline)) static void pick(unsigned v, int k)
{
    if (k == 11) {
        void *p = malloc(32);
        sink = p;
        free(p);
        return;
    }
    if ((v >> k) & 1)
        via1(v, k);
    else
        via0(v, k);
    sink = (void *)&k;
}

/* fork, and exec /bin/true in the child at once; its exit status. */
static int fork_exec(void)
{
    pid_t c = fork();
    if (c == 0) {
        execl("/bin/true", "true", (char *)NULL);
        _exit(127);
    }
    int st = 0;
    waitpid(c, &st, 0);
    return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

static void *worker(void *arg)
{
    (void)arg;
    for (int d = 0; d < 40; d++)
        nest(d);
    pthread_barrier_wait(&forked);
    pthread_barrier_wait(&done);
    return NULL;
}

int main(int argc, char **argv)
{
    int rounds = argc > 1 ? atoi(argv[1]) : 0;
    pthread_t t[2];
    pthread_barrier_init(&forked, NULL, 3);
    pthread_barrier_init(&done, NULL, 3);
    for (int i = 0; i < 2; i++)
        pthread_create(&t[i], NULL, worker, NULL);
    pthread_barrier_wait(&forked); /* both threads have freed from 40 contexts each */
    int st = 0;
    for (int r = 0; r < rounds && r < 128 && st == 0; r++) {
        for (unsigned v = 16 * (unsigned)r; v < 16 * (unsigned)r + 16; v++)
            pick(v, 0);
        st = fork_exec();
    }
    if (st == 0)
        st = fork_exec();
    pthread_barrier_wait(&done);
    for (int i = 0; i < 2; i++)
        pthread_join(t[i], NULL);
    printf("child status %d\n", st);
    return 0;
}
