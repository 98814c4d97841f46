/* A threaded program whose HIB table is full (run with a tiny hib_table_size) forks while its
 * threads hold cached HIBs, and the child execs at once: folding those caches in the child
 * evicts records, and the profile file they would open belongs to an image that is about to
 * be replaced. Only the parent's profile and the exec'd program's may be left, both complete. */
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

static void *worker(void *arg)
{
    (void)arg;
    for (int d = 0; d < 40; d++)
        nest(d);
    pthread_barrier_wait(&forked);
    pthread_barrier_wait(&done);
    return NULL;
}

int main(void)
{
    pthread_t t[2];
    pthread_barrier_init(&forked, NULL, 3);
    pthread_barrier_init(&done, NULL, 3);
    for (int i = 0; i < 2; i++)
        pthread_create(&t[i], NULL, worker, NULL);
    pthread_barrier_wait(&forked); /* both threads have freed from 40 contexts each */
    pid_t c = fork();
    if (c == 0) {
        execl("/bin/true", "true", (char *)NULL);
        _exit(127);
    }
    int st = 0;
    waitpid(c, &st, 0);
    pthread_barrier_wait(&done);
    for (int i = 0; i < 2; i++)
        pthread_join(t[i], NULL);
    printf("child status %d\n", WIFEXITED(st) ? WEXITSTATUS(st) : -1);
    return 0;
}
