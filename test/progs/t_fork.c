/* fork() while other threads allocate: the child must find the allocator (and the shim's locks)
 * usable, keep allocating, start a thread and exit 0. Repeated, and also forking from a thread. */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include "testutil.h"

#define NBUSY 4
#define NFORKS 60

static atomic_int stop;
static atomic_int busy_failed;

/* Keeps the allocator's locks hot so that fork() lands while some are held. */
static void *busy(void *arg)
{
    uint32_t seed = (uint32_t)(uintptr_t)arg * 2654435761u | 1u;
    void *slot[64] = {0};
    while (!atomic_load(&stop)) {
        unsigned k = xorshift(&seed) % 64;
        if (slot[k]) {
            if (!pat_ok(slot[k], 48, k)) {
                atomic_store(&busy_failed, 1);
                break;
            }
            free(slot[k]);
            slot[k] = NULL;
        } else {
            /* mix small (tcache/arena) and large (mmap) sizes */
            size_t n = (k % 8 == 0) ? 200000 + k : 48 + k * 13;
            slot[k] = malloc(n);
            if (!slot[k]) {
                atomic_store(&busy_failed, 2);
                break;
            }
            pat_fill(slot[k], 48, k);
        }
    }
    for (int k = 0; k < 64; k++)
        free(slot[k]);
    return NULL;
}

static void *child_thread(void *arg)
{
    for (int i = 0; i < 200; i++) {
        char *p = malloc(32 + i);
        if (!p)
            return (void *)1;
        pat_fill(p, 32 + i, (unsigned)i);
        if (!pat_ok(p, 32 + i, (unsigned)i))
            return (void *)1;
        free(p);
    }
    return NULL;
}

static void wait_child(pid_t pid, int iter, const char *what);

/* What the child does: allocate, reallocate, use a thread, fork a child of its own (some of
 * the time: the shim's locks must be free again in a child, whatever its options), then exit
 * with 0 (via exit() or _exit(), alternately, so the atexit path of the shim runs in forked
 * children too). */
static void child_body(int iter)
{
    void *v[100];
    for (int i = 0; i < 100; i++) {
        v[i] = malloc(16 + i * 37);
        if (!v[i])
            _exit(10);
        pat_fill(v[i], 16 + i * 37, (unsigned)i);
    }
    for (int i = 0; i < 100; i += 2) {
        void *q = realloc(v[i], 5000 + i);
        if (!q || !pat_ok(q, 16 + i * 37, (unsigned)i))
            _exit(11);
        v[i] = q;
    }
    if (iter % 10 == 0) {
        pthread_t t;
        void *res = (void *)1;
        if (pthread_create(&t, NULL, child_thread, NULL) != 0 || pthread_join(t, &res) != 0 || res)
            _exit(12);
    }
    if (iter % 10 == 5) {
        fflush(stdout);
        pid_t g = fork();
        if (g < 0)
            _exit(13);
        if (g == 0) {
            char *p = malloc(777);
            if (!p)
                _exit(14);
            pat_fill(p, 777, 7);
            free(p);
            _exit(pat_ok(v[1], 16 + 37, 1) ? 0 : 15);
        }
        wait_child(g, iter, "grandchild");
    }
    for (int i = 0; i < 100; i++)
        free(v[i]);
    if (iter & 1)
        _exit(0);
    exit(0);
}

/* Waits for the child with a deadline, so a deadlocked child is reported instead of hanging. */
static void wait_child(pid_t pid, int iter, const char *what)
{
    struct timespec ts = {0, 1000000};
    for (int ms = 0; ms < 20000; ms++) {
        int st;
        pid_t r = waitpid(pid, &st, WNOHANG);
        if (r == pid) {
            CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0,
                  "%s child %d: %s %d", what, iter, WIFEXITED(st) ? "exit status" : "signal",
                  WIFEXITED(st) ? WEXITSTATUS(st) : WTERMSIG(st));
            return;
        }
        CHECK(r == 0, "waitpid: errno %d", errno);
        nanosleep(&ts, NULL);
    }
    kill(pid, SIGKILL);
    waitpid(pid, NULL, 0);
    CHECK(0, "%s child %d did not exit within 20 s (deadlock after fork?)", what, iter);
}

static void fork_once(int iter, const char *what)
{
    fflush(stdout);
    pid_t pid = fork();
    CHECK(pid >= 0, "fork: errno %d", errno);
    if (pid == 0)
        child_body(iter);
    wait_child(pid, iter, what);
}

static void *forking_thread(void *arg)
{
    for (int i = 0; i < NFORKS / 5; i++)
        fork_once(i, "thread-forked");
    return NULL;
}

int main(void)
{
    pthread_t t[NBUSY], ft;
    for (long i = 0; i < NBUSY; i++)
        CHECK(pthread_create(&t[i], NULL, busy, (void *)(i + 1)) == 0, "pthread_create");

    for (int i = 0; i < NFORKS; i++) {
        /* the parent allocates too, so its own locks are also in play at fork time */
        void *p = malloc(100 + i);
        CHECK(p, "malloc");
        fork_once(i, "main-forked");
        free(p);
    }
    CHECK(pthread_create(&ft, NULL, forking_thread, NULL) == 0, "pthread_create");
    pthread_join(ft, NULL);

    atomic_store(&stop, 1);
    for (int i = 0; i < NBUSY; i++)
        pthread_join(t[i], NULL);
    CHECK(atomic_load(&busy_failed) == 0, "busy thread failure %d", atomic_load(&busy_failed));
    return 0;
}
