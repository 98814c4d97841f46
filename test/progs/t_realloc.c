/* Edge cases of the basic entry points as glibc defines them: realloc(p, 0) frees and returns
 * NULL, realloc(NULL, n), malloc(0), free(NULL), calloc zeroing of recycled dirty memory, realloc
 * keeping contents across growing and shrinking, reallocarray overflow. */
#include <errno.h>
#include <malloc.h>
#include <stdint.h>
#include "testutil.h"

static void *volatile sink;

static void test_zero_and_null(void)
{
    void *p = malloc(100);
    CHECK(p, "malloc");
    errno = 0;
    void *q = realloc(p, 0); /* glibc: frees p and returns NULL */
    CHECK(q == NULL, "realloc(p, 0) returned %p, glibc returns NULL", q);

    p = realloc(NULL, 333);
    CHECK(p, "realloc(NULL, 333)");
    CHECK(malloc_usable_size(p) >= 333, "usable size");
    memset(p, 0x5a, 333);
    free(p);

    for (int i = 0; i < 100; i++) {
        p = malloc(0);
        CHECK(p, "malloc(0) returned NULL");
        sink = p;
        free(p);
        p = calloc(0, 0);
        CHECK(p, "calloc(0, 0) returned NULL");
        free(p);
        p = realloc(NULL, 0); /* same as malloc(0) */
        CHECK(p, "realloc(NULL, 0) returned NULL");
        free(p);
    }
    free(NULL);
    void *n = NULL;
    free(n);
}

/* Sizes spanning tcache, fastbin/smallbin, largebin and mmap. */
static const size_t sizes[] = {1, 7, 16, 24, 31, 32, 33, 63, 64, 100, 127, 128, 500, 1000, 1024,
                               1031, 4000, 4096, 10000, 65536, 131000, 131072, 140000, 300000,
                               1 << 20, 3 << 20, 9000000};
#define NSIZES (sizeof sizes / sizeof sizes[0])

static void test_calloc_zero(void)
{
    for (int round = 0; round < 3; round++) {
        void *dirty[NSIZES];
        for (size_t i = 0; i < NSIZES; i++) {
            dirty[i] = malloc(sizes[i]);
            CHECK(dirty[i], "malloc %zu", sizes[i]);
            memset(dirty[i], 0xa5, malloc_usable_size(dirty[i]));
        }
        for (size_t i = 0; i < NSIZES; i++)
            free(dirty[i]);
        /* the freed dirty memory is now recycled by calloc */
        for (size_t i = 0; i < NSIZES; i++) {
            unsigned char *c = calloc(1, sizes[i]);
            CHECK(c, "calloc %zu", sizes[i]);
            for (size_t j = 0; j < sizes[i]; j++)
                CHECK(c[j] == 0, "calloc(1, %zu) byte %zu is %#x", sizes[i], j, c[j]);
            dirty[i] = c;
            memset(c, 0xa5, sizes[i]);
        }
        for (size_t i = 0; i < NSIZES; i++)
            free(dirty[i]);
        for (size_t i = 0; i < NSIZES; i++) {
            size_t nm = sizes[i] / 8 + 1;
            unsigned char *c = calloc(nm, 8);
            CHECK(c, "calloc %zu*8", nm);
            for (size_t j = 0; j < nm * 8; j++)
                CHECK(c[j] == 0, "calloc(%zu, 8) byte %zu is %#x", nm, j, c[j]);
            free(c);
        }
    }
}

/* Grows a block through every size and back down, checking the kept prefix each time. */
static void test_realloc_contents(void)
{
    size_t cur = 1;
    unsigned char *p = malloc(cur);
    CHECK(p, "malloc");
    pat_fill(p, cur, 3);
    for (size_t i = 0; i < NSIZES; i++) {
        unsigned char *q = realloc(p, sizes[i]);
        CHECK(q, "realloc to %zu", sizes[i]);
        size_t keep = cur < sizes[i] ? cur : sizes[i];
        CHECK(pat_ok(q, keep, 3), "realloc %zu -> %zu lost contents", cur, sizes[i]);
        pat_fill(q, sizes[i], 3);
        p = q;
        cur = sizes[i];
    }
    for (size_t i = NSIZES; i-- > 0;) {
        unsigned char *q = realloc(p, sizes[i]);
        CHECK(q, "realloc to %zu", sizes[i]);
        CHECK(pat_ok(q, sizes[i], 3), "realloc %zu -> %zu lost contents", cur, sizes[i]);
        p = q;
        cur = sizes[i];
    }
    free(p);
    /* many small steps, and in-place shrink/grow with a neighbour allocated behind */
    p = NULL;
    cur = 0;
    for (size_t n = 1; n < 20000; n += 1 + n / 8) {
        unsigned char *q = realloc(p, n);
        CHECK(q, "realloc %zu", n);
        CHECK(pat_ok(q, cur, 4), "step realloc to %zu lost contents", n);
        pat_fill(q, n, 4);
        void *neighbour = malloc(n / 3 + 1);
        sink = neighbour;
        p = q;
        cur = n;
        free(neighbour);
    }
    for (size_t n = cur; n > 0; n = n * 3 / 4) {
        unsigned char *q = realloc(p, n);
        CHECK(q, "realloc %zu", n);
        CHECK(pat_ok(q, n, 4), "step shrink to %zu lost contents", n);
        p = q;
    }
    free(p);
}

/* through a volatile pointer: clang assumes allocation functions leave errno alone */
static void *(*volatile reallocarray_)(void *, size_t, size_t) = reallocarray;

/* opaque to the compiler, which may otherwise assume a realloc result is never NULL */
static void *(*volatile realloc_)(void *, size_t) = realloc;

/* Blocks from the aligned family resized by realloc: the shim must find their real start. */
static void test_realloc_aligned(void)
{
    for (size_t a = 32; a <= ((size_t)1 << 20); a <<= 3) {
        for (size_t n = 1; n < 300000; n = n * 7 + 5) {
            unsigned char *p = memalign(a, n);
            CHECK(p, "memalign(%zu, %zu)", a, n);
            pat_fill(p, n, 6);
            unsigned char *q = realloc(p, n * 3 + 100);
            CHECK(q && pat_ok(q, n, 6), "realloc of memalign(%zu, %zu) block grown", a, n);
            q = realloc(q, n / 2 + 1);
            CHECK(q && pat_ok(q, n / 2 + 1, 6), "realloc of memalign(%zu, %zu) shrunk", a, n);
            free(q);
            void *pm = NULL;
            CHECK(posix_memalign(&pm, a, n) == 0, "posix_memalign");
            pat_fill(pm, n, 7);
            q = realloc(pm, n + 1);
            CHECK(q && pat_ok(q, n, 7), "realloc of posix_memalign(%zu, %zu) block", a, n);
            CHECK(malloc_usable_size(q) >= n + 1, "usable after realloc of aligned block");
            free(q);
            q = aligned_alloc(a, (n + a - 1) / a * a);
            CHECK(q, "aligned_alloc");
            CHECK(realloc_(q, 0) == NULL, "realloc(aligned, 0)");
        }
    }
}

static void test_reallocarray(void)
{
    unsigned char *p = reallocarray(NULL, 10, 10);
    CHECK(p, "reallocarray(NULL, 10, 10)");
    pat_fill(p, 100, 5);
    volatile size_t big = SIZE_MAX / 2;
    errno = 0;
    void *q = reallocarray_(p, big, 3);
    CHECK(q == NULL && errno == ENOMEM, "reallocarray overflow: %p errno %d", q, errno);
    CHECK(pat_ok(p, 100, 5), "reallocarray overflow touched the block");
    q = reallocarray(p, 50, 40);
    CHECK(q && pat_ok(q, 100, 5), "reallocarray grow");
    free(q);
}

/* Blocks whose user pointer starts a page (under the shim one plain block in 128, the header
 * then lies on the previous page): thousands of blocks of every small size, many on page
 * starts, keep their contents across reallocation and are all freed. */
#define NPAGE 30000
static void *page_blocks[NPAGE];

static void test_page_start(void)
{
    size_t n_aligned = 0;
    for (int i = 0; i < NPAGE; i++) {
        size_t size = (size_t)(i % 700) * 8 + (size_t)(i % 3);
        unsigned char *p = (i % 5 == 0) ? calloc(1, size + 1) : malloc(size + 1);
        CHECK(p, "allocation %d of %zu bytes", i, size + 1);
        if (i % 5 == 0)
            for (size_t j = 0; j <= size; j++)
                CHECK(p[j] == 0, "calloc byte %zu of block %d", j, i);
        n_aligned += ((uintptr_t)p & 4095) == 0;
        pat_fill(p, size + 1, (unsigned)i);
        page_blocks[i] = p;
    }
    if (under_shim())
        CHECK(n_aligned > 0, "no block of %d starts a page", NPAGE);
    for (int i = 0; i < NPAGE; i++) {
        size_t size = (size_t)(i % 700) * 8 + (size_t)(i % 3) + 1;
        CHECK(pat_ok(page_blocks[i], size, (unsigned)i), "block %d lost its contents", i);
        size_t grown = size + (size_t)(i % 11) * 16;
        unsigned char *q = realloc(page_blocks[i], grown);
        CHECK(q, "realloc of block %d to %zu", i, grown);
        CHECK(pat_ok(q, size, (unsigned)i), "realloc of block %d lost its contents", i);
        page_blocks[i] = q;
    }
    for (int i = NPAGE; i-- > 0;)
        free(page_blocks[i]);
}

/* glibc documents that the bytes malloc_usable_size reports beyond the request may be used,
 * and its realloc keeps them; string libraries (sds, for one) fill blocks up to that size.
 * realloc must keep every usable byte wherever the block moves, aligned blocks included. */
static void test_realloc_keeps_usable(void)
{
    static void *hold[4000];
    int nhold = 0;
    uint64_t x = 88172645463325252ull;
    for (int round = 0; round < 4000; round++) {
        x ^= x << 13, x ^= x >> 7, x ^= x << 17;
        size_t req = 1 + (size_t)(x % 300);
        unsigned char *p = (x >> 20) % 4 == 0 ? memalign(64, req) : malloc(req);
        CHECK(p, "malloc %zu", req);
        size_t u = malloc_usable_size(p);
        CHECK(u >= req, "usable %zu < %zu", u, req);
        pat_fill(p, u, (unsigned)round);
        hold[nhold++] = malloc(1 + (size_t)((x >> 30) % 64)); /* blocks in-place growth, shifts */
        size_t grow = u + (size_t)((x >> 40) % 2000);
        unsigned char *q = realloc(p, grow);
        CHECK(q, "realloc %zu -> %zu", req, grow);
        CHECK(pat_ok(q, u, (unsigned)round), "realloc of a %zu-byte block (%zu usable) to %zu lost usable bytes",
              req, u, grow);
        if ((x >> 50) % 2)
            free(q);
        else
            hold[nhold++ % 4000] = q;
        if (nhold >= 3990) {
            for (int i = 0; i < nhold; i++)
                free(hold[i]);
            nhold = 0;
        }
    }
    for (int i = 0; i < nhold; i++)
        free(hold[i]);
}

int main(void)
{
    test_zero_and_null();
    test_calloc_zero();
    test_realloc_contents();
    test_realloc_aligned();
    test_reallocarray();
    test_page_start();
    test_realloc_keeps_usable();
    return 0;
}
