/* Zero-sized requests, where allocators may answer NULL or a block (realloc(p, 0): glibc frees
 * and answers NULL, jemalloc and mimalloc answer a block). Outcomes are printed, not judged:
 * under the shim they must be those of the allocator under it (the rules checks in
 * test/integration/cases/t_zero.sh compare with the allocator alone; the bare run is glibc's). */
#include <errno.h>
#include <malloc.h>
#include <stdint.h>
#include "testutil.h"

/* volatile pointers: keep the compiler's knowledge of these functions out of the checks */
static void *(*volatile malloc_)(size_t) = malloc;
static void *(*volatile calloc_)(size_t, size_t) = calloc;
static void *(*volatile realloc_)(void *, size_t) = realloc;
static void *(*volatile reallocarray_)(void *, size_t, size_t) = reallocarray;
static void *(*volatile memalign_)(size_t, size_t) = memalign;
static void *(*volatile aligned_alloc_)(size_t, size_t) = aligned_alloc;
static int (*volatile posix_memalign_)(void **, size_t, size_t) = posix_memalign;

static void say(const char *what, void *p)
{
    printf("%s: %s\n", what, p ? "block" : "NULL");
    free(p);
}

int main(void)
{
    say("malloc(0)", malloc_(0));
    say("calloc(0, 0)", calloc_(0, 0));
    say("calloc(0, 8)", calloc_(0, 8));
    say("realloc(NULL, 0)", realloc_(NULL, 0));
    void *p = malloc_(100);
    CHECK(p, "malloc(100)");
    memset(p, 1, 100);
    say("realloc(100-byte block, 0)", realloc_(p, 0)); /* p is gone either way */
    p = malloc_(5000);
    CHECK(p, "malloc(5000)");
    memset(p, 1, 5000);
    say("realloc(5000-byte block, 0)", realloc_(p, 0));
    p = malloc_(10);
    CHECK(p, "malloc(10)");
    say("reallocarray(block, 0, 8)", reallocarray_(p, 0, 8));
    say("memalign(64, 0)", memalign_(64, 0));
    say("aligned_alloc(64, 0)", aligned_alloc_(64, 0));
    void *q = NULL;
    int rc = posix_memalign_(&q, 64, 0);
    printf("posix_memalign(64, 0): %d, %s\n", rc, q ? "block" : "NULL");
    free(q);
    return 0;
}
