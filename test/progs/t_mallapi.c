/* glibc's allocator API beyond malloc/free, which the shim exports too: mallopt, mallinfo2,
 * malloc_trim, malloc_info, malloc_stats, and the __libc_* / __posix_memalign aliases as found
 * by dlsym(RTLD_DEFAULT) (the shim's when preloaded), mixed freely with malloc/free. */
#include <dlfcn.h>
#include <errno.h>
#include <malloc.h>
#include <stdint.h>
#include "testutil.h"

static void *volatile sink;

int main(void)
{
    CHECK(mallopt(M_MMAP_THRESHOLD, 256 * 1024) == 1, "mallopt M_MMAP_THRESHOLD");
    CHECK(mallopt(M_TRIM_THRESHOLD, 512 * 1024) == 1, "mallopt M_TRIM_THRESHOLD");
    void *blocks[100];
    for (int i = 0; i < 100; i++)
        blocks[i] = malloc(1000 + (size_t)i * 100);
    struct mallinfo2 mi = mallinfo2();
    sink = &mi;
    for (int i = 0; i < 100; i++)
        free(blocks[i]);
    malloc_trim(0);
    FILE *f = fopen("/dev/null", "w");
    CHECK(f, "fopen /dev/null");
    CHECK(malloc_info(0, f) == 0, "malloc_info");
    fclose(f);

    struct {
        const char *name;
        void *fn;
    } fns[] = {{"__libc_malloc", 0}, {"__libc_free", 0}, {"__libc_calloc", 0},
               {"__libc_realloc", 0}, {"__libc_memalign", 0}, {"__libc_valloc", 0},
               {"__libc_pvalloc", 0}, {"__posix_memalign", 0}};
    for (size_t i = 0; i < sizeof fns / sizeof fns[0]; i++)
        fns[i].fn = dlsym(RTLD_DEFAULT, fns[i].name);
    void *(*l_malloc)(size_t) = (void *(*)(size_t))fns[0].fn;
    void (*l_free)(void *) = (void (*)(void *))fns[1].fn;
    void *(*l_calloc)(size_t, size_t) = (void *(*)(size_t, size_t))fns[2].fn;
    void *(*l_realloc)(void *, size_t) = (void *(*)(void *, size_t))fns[3].fn;
    void *(*l_memalign)(size_t, size_t) = (void *(*)(size_t, size_t))fns[4].fn;
    void *(*l_valloc)(size_t) = (void *(*)(size_t))fns[5].fn;
    void *(*l_pvalloc)(size_t) = (void *(*)(size_t))fns[6].fn;
    int (*l_posix_memalign)(void **, size_t, size_t) =
        (int (*)(void **, size_t, size_t))fns[7].fn;
    CHECK(l_malloc && l_free && l_calloc && l_realloc && l_memalign && l_valloc && l_pvalloc,
          "dlsym of a __libc_* alias failed");

    for (size_t n = 1; n < 1000000; n = n * 4 + 3) {
        unsigned char *p = l_malloc(n);
        CHECK(p, "__libc_malloc");
        pat_fill(p, n, 1);
        p = realloc(p, n + 10); /* libc alias -> interposed realloc */
        CHECK(p && pat_ok(p, n, 1), "realloc of a __libc_malloc block");
        l_free(p);
        p = malloc(n);
        CHECK(p, "malloc");
        pat_fill(p, n, 2);
        p = l_realloc(p, n * 2); /* interposed malloc -> libc alias realloc */
        CHECK(p && pat_ok(p, n, 2), "__libc_realloc of a malloc block");
        free(p);
        p = l_calloc(n, 1);
        CHECK(p, "__libc_calloc");
        for (size_t i = 0; i < n; i++)
            CHECK(p[i] == 0, "__libc_calloc not zeroed");
        free(p);
        p = l_memalign(256, n);
        CHECK(p && ((uintptr_t)p & 255) == 0, "__libc_memalign");
        memset(p, 1, n);
        l_free(p);
        p = l_valloc(n);
        CHECK(p && ((uintptr_t)p & 4095) == 0, "__libc_valloc");
        memset(p, 1, n);
        free(p);
        p = l_pvalloc(n);
        CHECK(p && ((uintptr_t)p & 4095) == 0, "__libc_pvalloc");
        memset(p, 1, n);
        free(p);
        if (l_posix_memalign) { /* glibc exports no __posix_memalign; the shim may */
            void *q = NULL;
            CHECK(l_posix_memalign(&q, 64, n) == 0 && ((uintptr_t)q & 63) == 0, "__posix_memalign");
            free(q);
        }
    }
    return 0;
}
