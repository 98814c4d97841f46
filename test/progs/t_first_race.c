/* Threads racing the allocator's first use: 16 threads started from a constructor (before main,
 * possibly before the shim finished initialising) and 16 more in main are released together by
 * a spin barrier and hammer malloc/calloc/realloc/posix_memalign/free at once. */
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include "testutil.h"

#define NTHREADS 16
#define ROUNDS 2000

struct group {
    pthread_t tid[NTHREADS];
    atomic_int arrived;  /* spin barrier: pthread_barrier is fine too, but spinning makes the
                          * threads hit malloc within nanoseconds of each other */
    atomic_int failed;
};

static struct group ctor_group, main_group;

static void *worker(void *arg)
{
    struct group *g = arg;
    uint32_t seed = (uint32_t)(uintptr_t)&seed | 1u;
    void *live[32] = {0};
    size_t len[32] = {0};

    atomic_fetch_add(&g->arrived, 1);
    while (atomic_load(&g->arrived) < NTHREADS)
        ;
    for (int r = 0; r < ROUNDS; r++) {
        unsigned k = xorshift(&seed) % 32;
        if (live[k]) {
            if (!pat_ok(live[k], len[k], k + 1u)) {
                atomic_store(&g->failed, 1);
                return NULL;
            }
            if (r & 1) {
                /* realloc keeps the old prefix; re-pattern the whole new block */
                size_t n = 1 + xorshift(&seed) % 5000;
                void *q = realloc(live[k], n);
                if (!q) {
                    atomic_store(&g->failed, 2);
                    return NULL;
                }
                size_t keep = n < len[k] ? n : len[k];
                if (!pat_ok(q, keep, k + 1u)) {
                    atomic_store(&g->failed, 3);
                    return NULL;
                }
                live[k] = q;
                len[k] = n;
                pat_fill(q, n, k + 1u);
                continue;
            }
            free(live[k]);
            live[k] = NULL;
            continue;
        }
        size_t n = 1 + xorshift(&seed) % 3000;
        void *p = NULL;
        switch (r % 3) {
        case 0: p = malloc(n); break;
        case 1: p = calloc(1, n); break;
        case 2:
            if (posix_memalign(&p, 64, n) != 0)
                p = NULL;
            break;
        }
        if (!p) {
            atomic_store(&g->failed, 4);
            return NULL;
        }
        if (r % 3 == 1)
            for (size_t i = 0; i < n; i++)
                if (((unsigned char *)p)[i]) {
                    atomic_store(&g->failed, 5);
                    return NULL;
                }
        pat_fill(p, n, k + 1u);
        live[k] = p;
        len[k] = n;
    }
    for (int k = 0; k < 32; k++)
        free(live[k]);
    return NULL;
}

static int start_group(struct group *g)
{
    for (int i = 0; i < NTHREADS; i++)
        if (pthread_create(&g->tid[i], NULL, worker, g) != 0)
            return -1;
    return 0;
}

static int ctor_start_failed;

/* Priority 101 runs before every default-priority constructor of the program. */
__attribute__((constructor(101))) static void start_early(void)
{
    ctor_start_failed = start_group(&ctor_group);
}

int main(void)
{
    CHECK(ctor_start_failed == 0, "pthread_create in constructor");
    CHECK(start_group(&main_group) == 0, "pthread_create in main");
    for (int i = 0; i < NTHREADS; i++) {
        pthread_join(ctor_group.tid[i], NULL);
        pthread_join(main_group.tid[i], NULL);
    }
    CHECK(atomic_load(&ctor_group.failed) == 0, "constructor threads: failure %d",
          atomic_load(&ctor_group.failed));
    CHECK(atomic_load(&main_group.failed) == 0, "main threads: failure %d",
          atomic_load(&main_group.failed));
    return 0;
}
