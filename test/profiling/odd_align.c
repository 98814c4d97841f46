/* aligned_alloc with alignments that are not powers of two: whether the allocator takes them
 * (glibc 2.36 and tcmalloc round them up) or refuses them (jemalloc, mimalloc: NULL) is the
 * allocator's choice, and under the shim it must stay the same. Prints one line per call. */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void *(*volatile aligned_alloc_)(size_t, size_t) = aligned_alloc;

int main(void)
{
    static const size_t aligns[] = {3, 24, 48, 96};
    for (size_t i = 0; i < sizeof aligns / sizeof *aligns; i++) {
        size_t a = aligns[i];
        void *p = aligned_alloc_(a, 4 * a);
        if (p) {
            memset(p, 1, 4 * a);
            free(p);
        }
        printf("aligned_alloc(%zu, %zu): %s\n", a, 4 * a, p ? "a block" : "NULL");
    }
    return 0;
}
