/* Pointers the shim never handed out but that really belong to the allocator underneath:
 * blocks from glibc's own __libc_malloc/__libc_memalign (looked up in libc.so.6's handle, so
 * they bypass the shim, which exports those names too) are freed, resized and measured through
 * the interposed functions. They must work (a single warning on stderr is acceptable); mmapped
 * ones are included because a 32-byte header read in front of them lands on the previous page.
 * The RTLD_DEFAULT lookup (which finds the shim's __libc_malloc when preloaded) is tested too. */
#include <dlfcn.h>
#include <malloc.h>
#include <stdint.h>
#include "testutil.h"

typedef void *(*malloc_fn)(size_t);
typedef void *(*memalign_fn)(size_t, size_t);

int main(void)
{
    void *libc = dlopen("libc.so.6", RTLD_NOW | RTLD_NOLOAD);
    CHECK(libc, "dlopen libc.so.6: %s", dlerror());
    malloc_fn libc_malloc = (malloc_fn)dlsym(libc, "__libc_malloc");
    memalign_fn libc_memalign = (memalign_fn)dlsym(libc, "__libc_memalign");
    malloc_fn default_malloc = (malloc_fn)dlsym(RTLD_DEFAULT, "__libc_malloc");
    CHECK(libc_malloc && libc_memalign && default_malloc, "dlsym __libc_malloc: %s", dlerror());

    for (int i = 0; i < 100; i++) {
        void *p = default_malloc(100 + (size_t)i * 1000);
        CHECK(p, "RTLD_DEFAULT __libc_malloc");
        memset(p, 0x43, 100 + (size_t)i * 1000);
        free(p);
    }

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
