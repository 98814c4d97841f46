/* A program with a pool allocator of its own that reports its objects through heapprof.h's
 * pool API: each site_* function makes a known number of objects of known sizes, freed, leaked,
 * resized or freed by destroying their pool, interleaved with malloc'd blocks and from several
 * threads. test/profiling/check_pool.py knows the numbers. Without the shim the calls are not
 * made (weak symbols) and the program prints the same line. */
#include "heapprof.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>

/* The pool: a bump region of its own mapping (its memory is not malloc's, so the live heap
 * counts each object once) with one free list per 8-byte size class up to 512 bytes. */
struct pool {
    pthread_mutex_t lock;
    char *next, *end;
    void *free[64];
};

static struct pool *pool_new(size_t bytes)
{
    struct pool *p = calloc(1, sizeof *p);
    pthread_mutex_init(&p->lock, NULL);
    p->next = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    p->end = p->next + bytes;
    HEAPPROF_POOL_CREATE(p);
    return p;
}

/* The allocator's entry: every object's report comes from here, so a context's innermost frame
 * is pool_get and the site is its caller. */
__attribute__((noinline)) void *pool_get(struct pool *p, size_t size)
{
    size_t cls = (size + 7) / 8;
    pthread_mutex_lock(&p->lock);
    void *o = cls < 64 ? p->free[cls] : NULL;
    if (o)
        p->free[cls] = *(void **)o;
    else if (p->next + cls * 8 <= p->end)
        o = p->next, p->next += cls * 8;
    pthread_mutex_unlock(&p->lock);
    if (o)
        HEAPPROF_POOL_ALLOC(p, o, size); /* after it is carved out */
    return o;
}

__attribute__((noinline)) void pool_put(struct pool *p, void *o, size_t size)
{
    HEAPPROF_POOL_FREE(o); /* before another thread can be given the memory */
    size_t cls = (size + 7) / 8;
    if (cls >= 64)
        return; /* large objects are not reused */
    pthread_mutex_lock(&p->lock);
    *(void **)o = p->free[cls];
    p->free[cls] = o;
    pthread_mutex_unlock(&p->lock);
}

static void pool_destroy(struct pool *p, size_t bytes)
{
    HEAPPROF_POOL_DESTROY(p);
    munmap(p->end - bytes, bytes);
    free(p);
}

#define POOL_BYTES (16u << 20)
static struct pool *A, *B, *C;
void *volatile sink;
static void *keep[1000];

static void sleep_ms(long ms)
{
    struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
    nanosleep(&ts, NULL);
}

/* 1000 objects of 48 bytes, each freed at once (addresses reused). */
__attribute__((noinline)) void site_pool_short(void)
{
    for (int i = 0; i < 1000; i++) {
        char *o = pool_get(A, 48);
        memset(o, 1, 48);
        sink = o;
        pool_put(A, o, 48);
    }
}

/* 300 objects of 20 bytes (24-byte stride: most not 32-byte aligned), never freed: leaks. */
__attribute__((noinline)) void site_pool_leak(void)
{
    for (int i = 0; i < 300; i++)
        keep[i] = pool_get(A, 20);
}

/* 200 objects of 40 bytes in pool B, freed by destroying B. */
__attribute__((noinline)) void site_pool_destroyed(void)
{
    for (int i = 0; i < 200; i++)
        sink = pool_get(B, 40);
}

/* 10 objects of 4096 bytes that live 100 ms each, together. */
__attribute__((noinline)) void site_pool_long(void)
{
    for (int i = 0; i < 10; i++) {
        keep[i + 300] = pool_get(A, 4096);
        memset(keep[i + 300], 2, 4096);
    }
    sleep_ms(100);
    for (int i = 0; i < 10; i++)
        pool_put(A, keep[i + 300], 4096);
}

/* Shrunk in place to 64 bytes: a new life from this call's stack, as realloc's. */
__attribute__((noinline)) void site_pool_shrink(void *o)
{
    HEAPPROF_POOL_RESIZE(o, 64);
    sink = o; /* not a tail call: the frame stays for the stack walk */
}

/* 100 objects of 128 bytes, each shrunk, then freed. */
__attribute__((noinline)) void site_pool_resize(void)
{
    for (int i = 0; i < 100; i++)
        keep[i + 400] = pool_get(A, 128);
    for (int i = 0; i < 100; i++)
        site_pool_shrink(keep[i + 400]);
    for (int i = 0; i < 100; i++)
        pool_put(A, keep[i + 400], 128);
}

/* 100 objects of 10,000 bytes live at once: the peak of the heap. */
__attribute__((noinline)) void site_pool_peak(void)
{
    for (int i = 0; i < 100; i++)
        keep[i + 500] = pool_get(A, 10000);
    for (int i = 0; i < 100; i++)
        pool_put(A, keep[i + 500], 10000);
}

/* malloc'd blocks between the pool's: 500 of 100 bytes, freed. */
__attribute__((noinline)) void site_malloc(void)
{
    for (int i = 0; i < 500; i++) {
        void *p = malloc(100);
        sink = p;
        free(p);
    }
}

/* Per thread: 250 objects of 16 bytes from the shared pool C, all live, then freed; 50 malloc'd
 * blocks of 200 bytes among them. */
__attribute__((noinline)) void site_pool_thread(void **mine)
{
    for (int i = 0; i < 250; i++) {
        mine[i] = pool_get(C, 16);
        memset(mine[i], 3, 16);
    }
}

__attribute__((noinline)) void site_malloc_thread(void **mine)
{
    for (int i = 0; i < 50; i++)
        mine[250 + i] = malloc(200);
}

static void *worker(void *arg)
{
    void *mine[300];
    (void)arg;
    site_pool_thread(mine);
    site_malloc_thread(mine);
    for (int i = 0; i < 250; i++)
        pool_put(C, mine[i], 16);
    for (int i = 0; i < 50; i++)
        free(mine[250 + i]);
    return NULL;
}

int main(void)
{
    A = pool_new(POOL_BYTES);
    B = pool_new(POOL_BYTES);
    C = pool_new(POOL_BYTES);
    site_pool_short();
    site_malloc();
    site_pool_leak();
    site_pool_destroyed();
    pool_destroy(B, POOL_BYTES);
    site_pool_long();
    site_pool_resize();
    site_pool_peak();
    pthread_t th[4];
    for (int i = 0; i < 4; i++)
        pthread_create(&th[i], NULL, worker, NULL);
    for (int i = 0; i < 4; i++)
        pthread_join(th[i], NULL);
    /* Frees of addresses never reported: counted, nothing else. */
    static char not_pool[3][64];
    for (int i = 0; i < 3; i++)
        HEAPPROF_POOL_FREE(not_pool[i]);
    printf("pool_api done\n");
    return 0;
}
