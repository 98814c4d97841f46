#include <stdlib.h>
#include "blocks.h"

__attribute__((noinline)) void *site_counts(size_t n)
{
    void *p = calloc(1, n);
    write_all(p, n);
    return p;
}
