/* Every block is aligned (32 bytes under the shim, which puts a 32-byte header in front of it,
 * 16 bare) and malloc_usable_size() covers the request and may be written in full. */
#include <malloc.h>
#include <stdint.h>
#include "testutil.h"

static uintptr_t min_align;

static void check(void *p, size_t n, const char *what)
{
    CHECK(p, "%s(%zu) failed", what, n);
    CHECK(((uintptr_t)p & (min_align - 1)) == 0, "%s(%zu) = %p not %zu-aligned", what, n, p,
          (size_t)min_align);
    size_t u = malloc_usable_size(p);
    CHECK(u >= n, "%s(%zu): usable size %zu", what, n, u);
    memset(p, 0x77, u); /* the whole usable size belongs to the caller */
}

int main(void)
{
    min_align = under_shim() ? 32 : 16;
    void *keep[256];
    int nk = 0;
    for (size_t n = 0; n < 70000; n += (n < 600 ? 1 : n / 16)) {
        void *p = malloc(n);
        check(p, n, "malloc");
        void *c = calloc(1, n);
        check(c, n, "calloc");
        void *r = realloc(p, n * 2 + 1);
        check(r, n * 2 + 1, "realloc");
        r = realloc(r, n / 2 + 1); /* not 0: realloc(p, 0) frees */
        check(r, n / 2 + 1, "realloc");
        void *m = memalign(8, n);
        check(m, n, "memalign");
        void *m2 = memalign(16, n + 3);
        check(m2, n + 3, "memalign");
        free(m2);
        free(r);
        free(c);
        /* keep some alive so later blocks come from fragmented memory, not a fresh top chunk */
        if (n % 7 == 0 && nk < 256)
            keep[nk++] = m;
        else
            free(m);
    }
    for (size_t n = 100000; n <= (size_t)40 << 20; n *= 3) {
        void *p = malloc(n);
        check(p, n, "malloc");
        p = realloc(p, n + 4096 * 3 + 1);
        check(p, n + 4096 * 3 + 1, "realloc");
        free(p);
        p = calloc(n, 1);
        check(p, n, "calloc");
        free(p);
    }
    void *z = malloc(0);
    check(z, 0, "malloc");
    free(z);
    z = realloc(NULL, 0);
    check(z, 0, "realloc");
    free(z);
    CHECK(malloc_usable_size(NULL) == 0, "malloc_usable_size(NULL)");
    while (nk > 0)
        free(keep[--nk]);
    return 0;
}
