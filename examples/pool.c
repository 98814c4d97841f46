/* A fixed-size object pool that reports its objects to heapprof (include/heapprof.h), the
 * example of docs/USAGE.md's "Pool and arena allocators". Without the shim the HEAPPROF_POOL_*
 * calls do nothing; under it, every object shows up in the profile with the stack of its
 * pool_alloc call, marked "pool". Build: make (build/pool-example), then
 *     scripts/heapprof-run -o pool.hpf build/pool-example && build/heapprof-report pool.hpf */
#include "heapprof.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

struct pool {
    size_t obj_size;
    char *next, *end; /* the unused part of the pool's region */
    void *free_list;  /* objects given back, linked through their first word */
};

static struct pool *pool_create(size_t obj_size, size_t count)
{
    struct pool *p = malloc(sizeof *p);
    size_t bytes = obj_size * count;
    /* The region comes from mmap: from malloc it would count in the heap besides its objects. */
    p->next = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    p->end = p->next + bytes;
    p->obj_size = obj_size;
    p->free_list = NULL;
    HEAPPROF_POOL_CREATE(p);
    return p;
}

static __attribute__((noinline)) void *pool_alloc(struct pool *p)
{
    void *o = p->free_list;
    if (o)
        p->free_list = *(void **)o;
    else if (p->next < p->end)
        o = p->next, p->next += p->obj_size;
    if (o) {
        HEAPPROF_POOL_ALLOC(p, o, p->obj_size); /* once the object is the program's */
        memset(o, 0, p->obj_size);              /* (its first accesses, for heapprof-cc builds) */
    }
    return o;
}

static void pool_free(struct pool *p, void *o)
{
    HEAPPROF_POOL_FREE(o); /* before the memory can be handed out again */
    *(void **)o = p->free_list;
    p->free_list = o;
}

static void pool_destroy(struct pool *p, size_t count)
{
    HEAPPROF_POOL_DESTROY(p); /* whatever is still allocated from it is freed */
    munmap(p->end - p->obj_size * count, p->obj_size * count);
    free(p);
}

/* The sites the report names (each stores its object: a plain `return pool_alloc(p)` would be
 * a tail call, and the site's frame gone from the stack). */
static void *volatile last_node, *volatile last_request; /* two: gcc would merge equal sites */
static __attribute__((noinline)) void *make_node(struct pool *p) { return last_node = pool_alloc(p); }
static __attribute__((noinline)) void *make_request(struct pool *p)
{
    return last_request = pool_alloc(p);
}

int main(void)
{
    struct pool *nodes = pool_create(64, 10000), *requests = pool_create(256, 100);
    static void *kept[1000];
    for (int i = 0; i < 1000; i++)
        kept[i] = make_node(nodes); /* live until the end: leaks in the exit profile */
    for (int i = 0; i < 5000; i++)
        pool_free(requests, make_request(requests)); /* short-lived, addresses reused */
    for (int i = 0; i < 10; i++)
        make_request(requests); /* freed by pool_destroy */
    pool_destroy(requests, 100);
    printf("%d nodes kept\n", (int)(sizeof kept / sizeof kept[0]));
    return 0;
}
