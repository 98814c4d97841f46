/* Signal handlers that allocate: SIGALRM from an interval timer and SIGUSR1 sent by a thread with
 * pthread_kill hit threads that malloc/free in a loop; the handlers malloc, fill, check and free.
 * Calling malloc from a handler that interrupted malloc is undefined even bare (glibc can
 * deadlock), so each thread marks its allocator calls and the handler only allocates outside
 * them: what is tested is the shim's own state (TLS guard, sampling, stack capture) around
 * handlers, not glibc's non-reentrancy. */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <sys/time.h>
#include <time.h>
#include "testutil.h"

#define NWORKERS 3
#define RUN_MS 1500

static __thread volatile sig_atomic_t in_alloc;
static atomic_int handled, skipped, bad;
static atomic_int stop;

static void handler(int sig)
{
    int saved = errno;
    if (in_alloc) {
        atomic_fetch_add(&skipped, 1);
        errno = saved;
        return;
    }
    size_t n = 16 + (size_t)atomic_load(&handled) % 3000;
    unsigned char *p = malloc(n);
    if (!p) {
        atomic_store(&bad, 1);
    } else {
        pat_fill(p, n, (unsigned)sig);
        unsigned char *q = realloc(p, n * 2);
        if (!q || !pat_ok(q, n, (unsigned)sig))
            atomic_store(&bad, 2);
        free(q ? q : p);
        void *c = calloc(4, 100);
        if (!c)
            atomic_store(&bad, 3);
        free(c);
    }
    atomic_fetch_add(&handled, 1);
    errno = saved;
}

/* Allocates in a loop; every allocator call is bracketed by in_alloc. Block contents are
 * verified before each free, so a handler's block landing on top of a live one is caught. */
static void alloc_loop(unsigned id)
{
    uint32_t seed = id * 7919u + 1u;
    void *slot[50] = {0};
    size_t len[50] = {0};
    while (!atomic_load(&stop)) {
        unsigned k = xorshift(&seed) % 50;
        if (slot[k]) {
            if (!pat_ok(slot[k], len[k], k + id))
                atomic_store(&bad, 10);
            in_alloc = 1;
            free(slot[k]);
            in_alloc = 0;
            slot[k] = NULL;
        } else {
            size_t n = 1 + xorshift(&seed) % 4000;
            in_alloc = 1;
            void *p = malloc(n);
            in_alloc = 0;
            if (!p) {
                atomic_store(&bad, 11);
                continue;
            }
            pat_fill(p, n, k + id);
            slot[k] = p;
            len[k] = n;
        }
    }
    for (int k = 0; k < 50; k++) {
        if (slot[k] && !pat_ok(slot[k], len[k], k + id))
            atomic_store(&bad, 12);
        in_alloc = 1;
        free(slot[k]);
        in_alloc = 0;
    }
}

static void block_signals(void)
{
    sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, SIGUSR1);
    sigaddset(&set, SIGALRM);
    pthread_sigmask(SIG_BLOCK, &set, NULL);
}

static void *worker(void *arg)
{
    alloc_loop((unsigned)(uintptr_t)arg);
    /* thread exit frees glibc's per-thread cache outside any in_alloc bracket */
    block_signals();
    return NULL;
}

struct targets {
    pthread_t t[NWORKERS + 1];
};

/* Sends SIGUSR1 round-robin to the workers and the main thread until told to stop. */
static void *signaller(void *arg)
{
    struct targets *tg = arg;
    struct timespec ts = {0, 50000};
    for (unsigned i = 0; !atomic_load(&stop); i++) {
        pthread_kill(tg->t[i % (NWORKERS + 1)], SIGUSR1);
        nanosleep(&ts, NULL);
    }
    return NULL;
}

static long now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static void *stopper(void *arg)
{
    long end = now_ms() + RUN_MS;
    struct timespec ts = {0, 10000000};
    while (now_ms() < end)
        nanosleep(&ts, NULL);
    atomic_store(&stop, 1);
    return NULL;
}

int main(void)
{
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = handler;
    sa.sa_flags = SA_RESTART;
    /* each handler blocks the other signal: a handler interrupting a handler inside malloc would
     * be the undefined re-entry this test avoids */
    sigemptyset(&sa.sa_mask);
    sigaddset(&sa.sa_mask, SIGUSR1);
    sigaddset(&sa.sa_mask, SIGALRM);
    CHECK(sigaction(SIGUSR1, &sa, NULL) == 0, "sigaction");
    CHECK(sigaction(SIGALRM, &sa, NULL) == 0, "sigaction");

    struct targets tg;
    pthread_t sig_t, stop_t;
    tg.t[0] = pthread_self();
    for (long i = 1; i <= NWORKERS; i++)
        CHECK(pthread_create(&tg.t[i], NULL, worker, (void *)i) == 0, "pthread_create");
    /* the helpers inherit a blocked mask, so no timer signal reaches them before they run */
    sigset_t old;
    pthread_sigmask(SIG_SETMASK, NULL, &old);
    block_signals();
    CHECK(pthread_create(&sig_t, NULL, signaller, &tg) == 0, "pthread_create");
    CHECK(pthread_create(&stop_t, NULL, stopper, NULL) == 0, "pthread_create");
    pthread_sigmask(SIG_SETMASK, &old, NULL);

    struct itimerval it = {{0, 500}, {0, 500}};
    CHECK(setitimer(ITIMER_REAL, &it, NULL) == 0, "setitimer");
    alloc_loop(0);
    struct itimerval off = {{0, 0}, {0, 0}};
    setitimer(ITIMER_REAL, &off, NULL);

    pthread_join(stop_t, NULL);
    pthread_join(sig_t, NULL);
    for (int i = 1; i <= NWORKERS; i++)
        pthread_join(tg.t[i], NULL);
    CHECK(atomic_load(&bad) == 0, "integrity failure %d", atomic_load(&bad));
    CHECK(atomic_load(&handled) > 100, "only %d signals handled with allocation",
          atomic_load(&handled));
    return 0;
}
