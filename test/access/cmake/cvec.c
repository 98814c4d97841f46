#include <stdlib.h>
#include "blocks.h"

__attribute__((noinline)) void *site_cvec(size_t n)
{
    void *p = malloc(n);
    write_all(p, n);
    return p;
}
