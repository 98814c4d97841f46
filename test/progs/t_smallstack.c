/* Allocation on small stacks: a signal handler on a sigaltstack of SIGSTKSZ bytes (as programs
 * and language runtimes install for crash handling) and threads with PTHREAD_STACK_MIN stacks,
 * each allocating for the first time there (per-thread set-up runs on that stack too). The
 * handler is raised synchronously, never while the thread is inside malloc. */
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <sys/mman.h>
#include <unistd.h>
#include "testutil.h"

static volatile int handler_bad;

static void alloc_some(unsigned seed)
{
    for (size_t n = 1; n < 300000; n = n * 5 + 3) {
        unsigned char *p = malloc(n);
        if (!p) {
            handler_bad = 1;
            return;
        }
        pat_fill(p, n < 64 ? n : 64, seed);
        unsigned char *q = realloc(p, n * 2);
        if (!q || !pat_ok(q, n < 64 ? n : 64, seed))
            handler_bad = 2;
        free(q ? q : p);
        void *a = NULL;
        if (posix_memalign(&a, 4096, n) != 0)
            handler_bad = 3;
        free(a);
        char *s = strdup("small stack");
        free(s);
        free(calloc(n, 1));
    }
}

static void handler(int sig)
{
    alloc_some((unsigned)sig);
}

static void *thread_main(void *arg)
{
    alloc_some(5);
    return NULL;
}

int main(void)
{
    size_t ss = SIGSTKSZ; /* sysconf(_SC_SIGSTKSZ) with glibc 2.34+ */
    void *alt = mmap(NULL, ss, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    CHECK(alt != MAP_FAILED, "mmap");
    stack_t st = {.ss_sp = alt, .ss_size = ss, .ss_flags = 0};
    CHECK(sigaltstack(&st, NULL) == 0, "sigaltstack");
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = handler;
    sa.sa_flags = SA_ONSTACK;
    sigemptyset(&sa.sa_mask);
    CHECK(sigaction(SIGUSR1, &sa, NULL) == 0, "sigaction");
    for (int i = 0; i < 200; i++)
        raise(SIGUSR1);
    CHECK(!handler_bad, "handler on the alternate stack: failure %d", handler_bad);

    pthread_attr_t attr;
    pthread_attr_init(&attr);
    CHECK(pthread_attr_setstacksize(&attr, PTHREAD_STACK_MIN) == 0, "setstacksize");
    for (int i = 0; i < 50; i++) {
        pthread_t t;
        CHECK(pthread_create(&t, &attr, thread_main, NULL) == 0, "pthread_create");
        pthread_join(t, NULL);
    }
    pthread_attr_destroy(&attr);
    CHECK(!handler_bad, "small-stack thread: failure %d", handler_bad);
    return 0;
}
