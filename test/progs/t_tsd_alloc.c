/* Thread-specific-data destructors that allocate, deep in a call chain, after the shim's own
 * destructor has retired the thread's cache: the shim then records with a small buffer on the
 * stack, which must have room for everything the unwinder writes (libunwind writes the shim's
 * own frames too before they are dropped). Each thread also allocates normally. */
#include <pthread.h>
#include "testutil.h"

static pthread_key_t key;
static void *volatile sink;
static volatile int depth_seen;

static __attribute__((noinline)) void deep(int n, size_t size)
{
    if (n > 0) {
        deep(n - 1, size + 8);
        depth_seen++; /* keeps the call from being a tail call */
        return;
    }
    char *p = malloc(size);
    CHECK(p, "malloc(%zu) in a destructor", size);
    memset(p, 0x5a, size);
    sink = p;
    p = realloc(p, size * 3);
    CHECK(p, "realloc in a destructor");
    sink = p;
    free(p);
}

static void destructor(void *arg)
{
    deep((int)(intptr_t)arg, 24);
}

static void *thread_main(void *arg)
{
    pthread_setspecific(key, arg);
    for (int i = 0; i < 100; i++) {
        void *p = malloc(16 + (size_t)i);
        CHECK(p, "malloc in a thread");
        sink = p;
        free(p);
    }
    return NULL;
}

int main(void)
{
    /* A first thread before the key exists, so the shim's destructor comes first. */
    pthread_t th;
    CHECK(pthread_create(&th, NULL, thread_main, NULL) == 0, "pthread_create");
    pthread_join(th, NULL);
    CHECK(pthread_key_create(&key, destructor) == 0, "pthread_key_create");
    for (int depth = 5; depth <= 60; depth += 11) {
        CHECK(pthread_create(&th, NULL, thread_main, (void *)(intptr_t)depth) == 0, "pthread_create");
        pthread_join(th, NULL);
    }
    CHECK(depth_seen > 0, "destructors ran");
    return 0;
}
