/* Thread life cycles through the interposed pthread_create: return values, pthread_exit,
 * cancellation with cleanup handlers that free, detached threads still allocating when main
 * finishes its work, user-supplied small stacks, many short-lived threads, and a creation that
 * fails (its error code is printed so the runner compares it with bare glibc's). */
#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <stdatomic.h>
#include <sys/mman.h>
#include <unistd.h>
#include "testutil.h"

static void *ret_block(void *arg)
{
    size_t n = (size_t)(uintptr_t)arg;
    unsigned char *p = malloc(n);
    if (p)
        pat_fill(p, n, (unsigned)n);
    return p; /* freed by the joiner */
}

static void *exits_early(void *arg)
{
    char *p = strdup("from pthread_exit");
    pthread_exit(p);
}

static void cleanup_free(void *p)
{
    free(*(void **)p);
}

static atomic_int cancel_ready;

static void *cancellable(void *arg)
{
    void *block = malloc(1000);
    pthread_cleanup_push(cleanup_free, &block);
    atomic_store(&cancel_ready, 1);
    for (;;) {
        void *q = malloc(100);
        free(q);
        pthread_testcancel();
        usleep(100);
    }
    pthread_cleanup_pop(1);
    return NULL;
}

static atomic_int detached_done;

static void *detached(void *arg)
{
    for (int i = 0; i < 1000; i++) {
        void *p = malloc(16 + (size_t)i);
        free(p);
    }
    atomic_fetch_add(&detached_done, 1);
    return NULL;
}

/* deep enough to need most of a small stack; allocates on the way down */
static int recurse(int depth)
{
    volatile char pad[512];
    pad[0] = (char)depth;
    void *p = malloc(32);
    int r = depth ? recurse(depth - 1) : 0;
    free(p);
    return r + pad[0];
}

static void *small_stack(void *arg)
{
    return (void *)(uintptr_t)recurse(40);
}

int main(void)
{
    pthread_t t;
    for (size_t n = 1; n < 2000000; n = n * 3 + 1) {
        void *r;
        CHECK(pthread_create(&t, NULL, ret_block, (void *)(uintptr_t)n) == 0, "create");
        CHECK(pthread_join(t, &r) == 0 && r, "join");
        CHECK(pat_ok(r, n, (unsigned)n), "block returned by a thread corrupted");
        free(r);
    }

    void *r;
    CHECK(pthread_create(&t, NULL, exits_early, NULL) == 0, "create");
    CHECK(pthread_join(t, &r) == 0 && r && strcmp(r, "from pthread_exit") == 0, "pthread_exit value");
    free(r);

    CHECK(pthread_create(&t, NULL, cancellable, NULL) == 0, "create");
    while (!atomic_load(&cancel_ready))
        usleep(100);
    CHECK(pthread_cancel(t) == 0, "cancel");
    CHECK(pthread_join(t, &r) == 0 && r == PTHREAD_CANCELED, "cancelled join");

    pthread_attr_t attr;
    pthread_attr_init(&attr);
    pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
    for (int i = 0; i < 20; i++)
        CHECK(pthread_create(&t, &attr, detached, NULL) == 0, "create detached");
    pthread_attr_destroy(&attr);

    /* a stack the program provides, 64 KiB */
    size_t ss = 64 * 1024;
    void *stack = mmap(NULL, ss, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    CHECK(stack != MAP_FAILED, "mmap");
    pthread_attr_init(&attr);
    CHECK(pthread_attr_setstack(&attr, stack, ss) == 0, "setstack");
    CHECK(pthread_create(&t, &attr, small_stack, NULL) == 0, "create on user stack");
    CHECK(pthread_join(t, &r) == 0, "join");
    pthread_attr_destroy(&attr);
    munmap(stack, ss);
    pthread_attr_init(&attr);
    CHECK(pthread_attr_setstacksize(&attr, PTHREAD_STACK_MIN + 32 * 1024) == 0, "setstacksize");
    CHECK(pthread_create(&t, &attr, small_stack, NULL) == 0, "create with small stack");
    CHECK(pthread_join(t, &r) == 0, "join");
    pthread_attr_destroy(&attr);

    /* many short-lived threads, two at a time */
    for (int i = 0; i < 300; i++) {
        pthread_t a, b;
        CHECK(pthread_create(&a, NULL, ret_block, (void *)(uintptr_t)100) == 0, "create");
        CHECK(pthread_create(&b, NULL, ret_block, (void *)(uintptr_t)5000) == 0, "create");
        void *ra, *rb;
        pthread_join(a, &ra);
        pthread_join(b, &rb);
        free(rb);
        free(ra);
    }

    /* a creation that fails: a stack larger than the address space can hold */
    pthread_attr_init(&attr);
    int rc = pthread_attr_setstacksize(&attr, (size_t)1 << 62);
    if (rc == 0) {
        rc = pthread_create(&t, &attr, ret_block, (void *)(uintptr_t)1);
        printf("pthread_create with a 2^62-byte stack: %s\n",
               rc == 0 ? "succeeded" : rc == EAGAIN ? "EAGAIN" : rc == ENOMEM ? "ENOMEM" : "other error");
        if (rc == 0)
            pthread_join(t, &r);
    }
    pthread_attr_destroy(&attr);

    while (atomic_load(&detached_done) < 20)
        usleep(1000);
    return 0;
}
