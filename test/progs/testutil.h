/* Tiny helpers shared by the integration test programs: failure reporting and the
 * "am I running under the shim" switch. Header-only so each program stays one file. */
#ifndef HP_TESTUTIL_H
#define HP_TESTUTIL_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Failures go to stdout, which the runner compares between the bare and the shim run, and the
 * exit status 1 makes them visible even when both runs fail alike. */
#define CHECK(cond, ...)                                                   \
    do {                                                                   \
        if (!(cond)) {                                                     \
            printf("FAIL: %s:%d: %s: ", __FILE__, __LINE__, #cond);        \
            printf(__VA_ARGS__);                                           \
            printf("\n");                                                  \
            fflush(stdout);                                                \
            exit(1);                                                       \
        }                                                                  \
    } while (0)

/* The runner sets HEAPPROF_TEST_UNDER_SHIM=1 only for runs preloaded with the real shim, so
 * shim-specific promises (32-byte alignment) are checked there and nowhere else. */
static inline int under_shim(void)
{
    const char *v = getenv("HEAPPROF_TEST_UNDER_SHIM");
    return v && strcmp(v, "1") == 0;
}

/* Fills and verifies blocks with a pattern derived from a per-block seed, so a block that was
 * handed out twice (and overwritten by its other owner) is caught. The pattern does not depend
 * on the address, so it survives a moving realloc. */
static inline unsigned char pat_byte(size_t i, unsigned seed)
{
    return (unsigned char)((i * 131u + (i >> 8) + seed * 7u + 1u) & 0xff);
}

static inline void pat_fill(void *p, size_t n, unsigned seed)
{
    unsigned char *c = (unsigned char *)p;
    for (size_t i = 0; i < n; i++)
        c[i] = pat_byte(i, seed);
}

static inline int pat_ok(const void *p, size_t n, unsigned seed)
{
    const unsigned char *c = (const unsigned char *)p;
    for (size_t i = 0; i < n; i++)
        if (c[i] != pat_byte(i, seed))
            return 0;
    return 1;
}

/* Cheap deterministic per-thread random numbers. */
static inline uint32_t xorshift(uint32_t *s)
{
    uint32_t x = *s;
    x ^= x << 13;
    x ^= x >> 17;
    x ^= x << 5;
    return *s = x;
}

#endif
