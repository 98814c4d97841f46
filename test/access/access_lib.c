/* The instrumented shared library of patterns.c (linked) and plain_host.c (opened with
 * RTLD_LOCAL): writes every 8th byte of a block once. */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

void lib_fill(void *p, size_t n);
void *lib_alloc_fill(size_t n);

void lib_fill(void *p, size_t n)
{
    volatile uint64_t *q = p;
    for (size_t i = 0; i < n / 8; i++)
        q[i] = i;
}

/* For plain_host.c: the block comes from the host, which is not instrumented. */
void *lib_alloc_fill(size_t n)
{
    void *p = malloc(n);
    if (p)
        lib_fill(p, n);
    return p;
}
