/* Pointers the shim never handed out but that really belong to the allocator underneath:
 * blocks from glibc's __libc_malloc/__libc_memalign (found with dlsym, so they bypass the
 * interposed functions) are freed, resized and measured through the interposed functions.
 * They must work (a single warning on stderr is acceptable); mmapped ones are included because
 * a 32-byte header read in front of them lands on the previous page. */
#include <dlfcn.h>
#include <malloc.h>
#include <stdint.h>
#include "testutil.h"

typedef void *(*malloc_fn)(size_t);
typedef void *(*memalign_fn)(size_t, size_t);

int main(void)
{
    malloc_fn libc_malloc = (malloc_fn)dlsym(RTLD_DEFAULT, "__libc_malloc");
    memalign_fn libc_memalign = (memalign_fn)dlsym(RTLD_DEFAULT, "__libc_memalign");
    CHECK(libc_malloc && libc_memalign, "dlsym __libc_malloc: %s", dlerror());

    static const size_t sizes[] = {1, 24, 100, 1000, 70000, 140000, 1 << 20, 16 << 20};
    for (int round = 0; round < 20; round++) {
        for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++) {
            size_t n = sizes[i];
            void *p = libc_malloc(n);
            CHECK(p, "__libc_malloc(%zu)", n);
            memset(p, 0x44, n);
            free(p);

            p = libc_memalign(4096, n);
            CHECK(p, "__libc_memalign(4096, %zu)", n);
            memset(p, 0x45, n);
            free(p);
        }
    }
    /* resize and measure a foreign block, then free it */
    for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++) {
        size_t n = sizes[i];
        unsigned char *p = libc_malloc(n);
        CHECK(p, "__libc_malloc(%zu)", n);
        pat_fill(p, n, 8);
        CHECK(malloc_usable_size(p) >= n, "malloc_usable_size(foreign %zu) = %zu", n,
              malloc_usable_size(p));
        unsigned char *q = realloc(p, n * 2 + 10);
        CHECK(q && pat_ok(q, n, 8), "realloc of foreign block of %zu", n);
        memset(q, 1, n * 2 + 10);
        free(q);
    }
    return 0;
}
