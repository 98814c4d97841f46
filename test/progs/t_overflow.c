/* Requests that can't be satisfied because size arithmetic overflows (the shim adds a 32-byte
 * header, so sizes near SIZE_MAX are where its own arithmetic could wrap): each must return NULL
 * with errno ENOMEM and leave existing blocks untouched. */
#include <errno.h>
#include <malloc.h>
#include <stdint.h>
#include <unistd.h>
#include "testutil.h"

/* volatile so the compiler neither folds the calls nor warns about the sizes */
static volatile size_t vmax = SIZE_MAX;
static volatile size_t vpmax = PTRDIFF_MAX;

/* Called through volatile pointers: LLVM models the allocation functions as touching no
 * program-visible memory, errno included, so clang would read errno as the 0 stored before the
 * call. Real programs do check errno after malloc; the test must see what the library did. */
static void *(*volatile malloc_)(size_t) = malloc;
static void *(*volatile calloc_)(size_t, size_t) = calloc;
static void *(*volatile realloc_)(void *, size_t) = realloc;
static void *(*volatile reallocarray_)(void *, size_t, size_t) = reallocarray;
static void *(*volatile memalign_)(size_t, size_t) = memalign;
static void *(*volatile aligned_alloc_)(size_t, size_t) = aligned_alloc;
static void *(*volatile valloc_)(size_t) = valloc;
static void *(*volatile pvalloc_)(size_t) = pvalloc;
#define malloc malloc_
#define calloc calloc_
#define realloc realloc_
#define reallocarray reallocarray_
#define memalign memalign_
#define aligned_alloc aligned_alloc_
#define valloc valloc_
#define pvalloc pvalloc_

#define EXPECT_ENOMEM(call)                                                          \
    do {                                                                             \
        errno = 0;                                                                   \
        void *r_ = (call);                                                           \
        CHECK(r_ == NULL && errno == ENOMEM, "%s -> %p, errno %d", #call, r_, errno); \
    } while (0)

int main(void)
{
    size_t m = vmax, pm = vpmax;
    EXPECT_ENOMEM(malloc(m));
    EXPECT_ENOMEM(malloc(m - 16));
    EXPECT_ENOMEM(calloc(m / 2, 3));
    EXPECT_ENOMEM(calloc(1, m - 10));
    EXPECT_ENOMEM(calloc(m - 10, 1));
    EXPECT_ENOMEM(calloc((m >> 32) + 1, (m >> 32) + 1));
    EXPECT_ENOMEM(memalign(64, m - 32));
    EXPECT_ENOMEM(aligned_alloc(4096, m - 100));
    EXPECT_ENOMEM(valloc(m - 100));
    EXPECT_ENOMEM(pvalloc(m - 100));
    EXPECT_ENOMEM(reallocarray(NULL, m / 2, 3));
    /* every size within a few headers of SIZE_MAX and around PTRDIFF_MAX */
    for (size_t k = 0; k <= 160; k++) {
        EXPECT_ENOMEM(malloc(m - k));
        EXPECT_ENOMEM(calloc(1, m - k));
        EXPECT_ENOMEM(realloc(NULL, m - k));
        EXPECT_ENOMEM(memalign(32, m - k));
        EXPECT_ENOMEM(malloc(pm + k));
        EXPECT_ENOMEM(malloc(pm - k));
    }

    unsigned char *p = malloc(1000);
    CHECK(p, "malloc");
    pat_fill(p, 1000, 1);
    for (size_t k = 0; k <= 64; k++) {
        EXPECT_ENOMEM(realloc(p, m - k));
        CHECK(pat_ok(p, 1000, 1), "realloc(p, SIZE_MAX-%zu) touched p", k);
        EXPECT_ENOMEM(realloc(p, pm + k));
    }
    EXPECT_ENOMEM(realloc(p, m - 8));
    CHECK(pat_ok(p, 1000, 1), "failed realloc touched p");
    CHECK(malloc_usable_size(p) >= 1000, "usable size after failed realloc");
    free(p);

    void *out = (void *)&out;
    int rc = posix_memalign(&out, 64, m - 32);
    CHECK(rc == ENOMEM, "posix_memalign(64, SIZE_MAX-32) returned %d", rc);
    rc = posix_memalign(&out, 4096, pm);
    CHECK(rc == ENOMEM, "posix_memalign(4096, PTRDIFF_MAX) returned %d", rc);
    return 0;
}
