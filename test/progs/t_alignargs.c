/* memalign and aligned_alloc with alignments allocators disagree on (0, not a power of two):
 * glibc 2.36 takes them (0 as malloc, the others rounded up), jemalloc refuses them, mimalloc
 * refuses 0 or not depending on the size. Outcomes are printed, not judged: the runner
 * compares them under the shim with those of the same allocator without it (the rules checks in
 * test/integration/cases/t_alignargs.sh), where the shim must answer as the allocator does. */
#include <errno.h>
#include <malloc.h>
#include <stdint.h>
#include "testutil.h"

/* volatile pointers: keep the compiler's knowledge of these functions out of the errno checks */
static void *(*volatile memalign_)(size_t, size_t) = memalign;
static void *(*volatile aligned_alloc_)(size_t, size_t) = aligned_alloc;

static const char *errno_name(int e)
{
    switch (e) {
    case 0: return "unchanged";
    case EINVAL: return "EINVAL";
    case ENOMEM: return "ENOMEM";
    default: return "other";
    }
}

/* One call of fn (memalign or aligned_alloc, named name) and its outcome. */
static void try_one(const char *name, void *(*fn)(size_t, size_t), size_t a, size_t n)
{
    errno = 0;
    void *volatile p = fn(a, n);
    printf("%s(%zu, %zu): %s", name, a, n, p ? "block" : "NULL");
    if (!p)
        printf(", errno %s", errno_name(errno));
    putchar('\n');
    if (p) {
        memset(p, 0x5a, n);
        free(p);
    }
}

int main(void)
{
    static const struct { size_t align, size; } cases[] = {
        {0, 16}, {0, 10}, {0, 0}, {0, 100}, {3, 16}, {3, 100}, {24, 48}, {48, 100},
        {100, 1000}, {1, 0}, {8, 24}, {64, 100}, {4096, 10},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        try_one("memalign", memalign_, cases[i].align, cases[i].size);
        try_one("aligned_alloc", aligned_alloc_, cases[i].align, cases[i].size);
    }
    return 0;
}
