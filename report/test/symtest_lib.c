/* A small shared object for test_symbolize: linked stripped (only .dynsym) with a version
 * script, so its symbol table holds absolute symbols (one per version node, value 0) and its
 * PLT lies below every function symbol, as in Debian's libgnutls. The report must name code
 * addresses there as libdwfl does: not after a version node. */
#include <stdio.h>
#include <stdlib.h>

int symtest_one(int x)
{
    return puts("one") + x;
}

int symtest_two(int x)
{
    char *p = malloc((size_t)x + 1);
    int r = printf("%d %p\n", x, (void *)p);
    free(p);
    return r;
}
