/* link: -ljemalloc */
/* A program written against jemalloc's own API, linked with jemalloc: mallocx/rallocx/xallocx/
 * sallocx/dallocx/sdallocx/nallocx with alignment, zeroing, arena and thread-cache flags, mixed
 * with malloc/realloc/free on the same blocks (sallocx or sdallocx of a malloc'd block is legal
 * under jemalloc, and the shim made that block). */
#include "testutil.h"

#include <jemalloc/jemalloc.h>
#include <pthread.h>
#include <stdint.h>

static void *volatile sink;

/* Leaves freed dirty memory around, so a zeroing bug shows as non-zero bytes. */
static void dirty_heap(void)
{
    for (int i = 0; i < 64; i++) {
        unsigned char *p = mallocx(64 + i * 97, 0);
        memset(p, 0xa5, 64 + i * 97);
        sink = p;
        dallocx(p, 0);
    }
}

static int all_zero(const unsigned char *p, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (p[i])
            return 0;
    return 1;
}

/* Under backend=glibc the shim allocates from glibc whatever the program asks: arenas cannot
 * be honoured there, so that one check is left out (the output stays the same). */
static int backend_is_jemalloc(void)
{
    const char *o = getenv("HEAPPROF_OPTIONS");
    return !(o && strstr(o, "backend=glibc"));
}

/* Frees the even blocks (malloc'd by the main thread) with dallocx. */
static void *free_even(void *arg)
{
    void **b = arg;
    for (int i = 0; i < 4000; i += 2)
        dallocx(b[i], 0);
    return NULL;
}

int main(void)
{
    /* malloc'd blocks through jemalloc's size and free functions. */
    for (unsigned i = 0; i < 2000; i++) {
        size_t n = 1 + (i * 37) % 5000;
        unsigned char *p = malloc(n);
        CHECK(p, "malloc(%zu)", n);
        size_t u = sallocx(p, 0);
        CHECK(u >= n, "sallocx %zu < %zu", u, n);
        CHECK(malloc_usable_size(p) == u, "malloc_usable_size %zu != sallocx %zu", malloc_usable_size(p), u);
        pat_fill(p, u, i); /* all of it is usable */
        sink = p;
        if (i % 3 == 0)
            sdallocx(p, n, 0);
        else if (i % 3 == 1)
            dallocx(p, 0);
        else
            free(p);
    }

    /* mallocx: alignment and zeroing, freed every which way. */
    dirty_heap();
    for (unsigned lg = 0; lg <= 13; lg++) {
        for (unsigned k = 0; k < 20; k++) {
            size_t n = 1 + k * 311;
            int flags = MALLOCX_LG_ALIGN(lg) | (k % 2 ? MALLOCX_ZERO : 0);
            unsigned char *p = mallocx(n, flags);
            CHECK(p, "mallocx(%zu, lg %u)", n, lg);
            CHECK(((uintptr_t)p & ((1u << lg) - 1)) == 0, "mallocx lg %u: %p misaligned", lg, (void *)p);
            if (k % 2)
                CHECK(all_zero(p, n), "mallocx(%zu, MALLOCX_ZERO) not zeroed", n);
            size_t nx = nallocx(n, flags);
            CHECK(nx >= n, "nallocx(%zu) = %zu", n, nx);
            CHECK(sallocx(p, 0) >= n, "sallocx %zu < %zu", sallocx(p, 0), n);
            pat_fill(p, n, k);
            sink = p;
            switch (k % 4) {
            case 0: free(p); break;
            case 1: dallocx(p, 0); break;
            case 2: sdallocx(p, n, flags); break;
            default: dallocx(p, MALLOCX_TCACHE_NONE); break;
            }
        }
    }

    /* rallocx: growth keeps the contents; MALLOCX_ZERO zeroes past the old usable size;
     * alignment holds after the move. */
    dirty_heap();
    unsigned char *r = malloc(10);
    pat_fill(r, 10, 5);
    size_t cur = 10;
    for (size_t n = 100; n < 300000; n = n * 3 + 1) {
        size_t old_usable = sallocx(r, 0);
        unsigned char *q = rallocx(r, n, MALLOCX_ZERO | MALLOCX_ALIGN(64));
        CHECK(q, "rallocx(%zu)", n);
        CHECK(((uintptr_t)q & 63) == 0, "rallocx: %p not 64-byte aligned", (void *)q);
        CHECK(pat_ok(q, cur, 5), "rallocx(%zu) lost the contents", n);
        if (old_usable < n)
            CHECK(all_zero(q + old_usable, n - old_usable), "rallocx(%zu, MALLOCX_ZERO): new bytes not zero", n);
        pat_fill(q, n, 5);
        r = q;
        cur = n;
    }
    r = rallocx(r, 20, 0); /* shrink */
    CHECK(r && pat_ok(r, 20, 5), "rallocx shrink lost the contents");
    r = realloc(r, 50000);
    CHECK(r && pat_ok(r, 20, 5), "realloc of a rallocx block lost the contents");
    sdallocx(r, 50000, 0);

    /* xallocx: whatever it does, the block stays valid and its answer is the usable size. */
    unsigned char *x = mallocx(1000, 0);
    pat_fill(x, 1000, 9);
    size_t got = xallocx(x, 2000, 100, 0);
    CHECK(got == sallocx(x, 0), "xallocx answered %zu, sallocx says %zu", got, sallocx(x, 0));
    CHECK(got >= 1000 && pat_ok(x, 1000, 9), "xallocx damaged the block");
    got = xallocx(x, 10, 0, 0);
    CHECK(got >= 10 && pat_ok(x, 10, 9), "xallocx shrink damaged the block");
    dallocx(x, 0);

    /* An arena of the program's own: mallocx with MALLOCX_ARENA lands in it. */
    unsigned arena;
    size_t sz = sizeof arena;
    CHECK(mallctl("arenas.create", &arena, &sz, NULL, 0) == 0, "arenas.create failed");
    for (int i = 0; i < 100; i++) {
        size_t n = 16 + i * 1000;
        void *p = mallocx(n, MALLOCX_ARENA(arena) | MALLOCX_TCACHE_NONE | (i % 2 ? MALLOCX_ZERO : 0));
        CHECK(p, "mallocx(%zu, MALLOCX_ARENA)", n);
        if (i % 2)
            CHECK(all_zero(p, n), "mallocx(%zu, MALLOCX_ARENA | MALLOCX_ZERO) not zeroed", n);
        if (backend_is_jemalloc()) {
            unsigned in = ~0u;
            size_t isz = sizeof in;
            const void *ptr = p;
            CHECK(mallctl("arenas.lookup", &in, &isz, (void *)&ptr, sizeof ptr) == 0 && in == arena,
                  "block of %zu bytes in arena %u, asked for %u", n, in, arena);
        }
        sink = p;
        dallocx(p, MALLOCX_TCACHE_NONE);
    }

    /* Threads mixing the two APIs on blocks passed between them. */
    enum { N = 4000 };
    static void *blocks[N];
    for (int i = 0; i < N; i++)
        blocks[i] = i % 2 ? mallocx(24 + i % 300, MALLOCX_ALIGN(32)) : malloc(24 + i % 300);
    pthread_t t;
    CHECK(pthread_create(&t, NULL, free_even, blocks) == 0, "pthread_create");
    for (int i = 1; i < N; i += 2)
        sdallocx(blocks[i], 24 + i % 300, 0);
    pthread_join(t, NULL);
    puts("jemalloc api ok");
    return 0;
}
