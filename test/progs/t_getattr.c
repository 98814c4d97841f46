/* Threads whose first call is pthread_getattr_np (as the JVM's and Rust's threads do to find
 * their stacks): glibc allocates inside it while holding the thread's own lock, so an allocator
 * that asks pthread_getattr_np about the thread from there waits on itself forever. */
#define _GNU_SOURCE
#include "testutil.h"

#include <pthread.h>

static void *first_getattr(void *arg)
{
    (void)arg;
    pthread_attr_t attr;
    void *addr;
    size_t size;
    CHECK(pthread_getattr_np(pthread_self(), &attr) == 0, "pthread_getattr_np");
    CHECK(pthread_attr_getstack(&attr, &addr, &size) == 0, "pthread_attr_getstack");
    CHECK((char *)&attr > (char *)addr && (char *)&attr < (char *)addr + size, "stack bounds");
    pthread_attr_destroy(&attr);
    void *volatile p = malloc(100);
    free(p);
    return NULL;
}

int main(void)
{
    for (int round = 0; round < 20; round++) {
        pthread_t t[4];
        pthread_attr_t a;
        pthread_attr_init(&a);
        if (round % 2)
            pthread_attr_setstacksize(&a, 256 * 1024);
        for (int i = 0; i < 4; i++)
            CHECK(pthread_create(&t[i], &a, first_getattr, NULL) == 0, "pthread_create");
        for (int i = 0; i < 4; i++)
            pthread_join(t[i], NULL);
        pthread_attr_destroy(&a);
    }
    puts("getattr ok");
    return 0;
}
