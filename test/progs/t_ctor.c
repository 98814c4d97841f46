/* Allocation before main: constructors (one at the earliest priority) malloc, calloc, realloc
 * and strdup; main checks and frees the blocks, and a destructor frees one more after main. */
#include <malloc.h>
#include "testutil.h"

static char *volatile early, *volatile normal, *volatile zeroed, *volatile grown, *volatile late;

__attribute__((constructor(101))) static void ctor_early(void)
{
    early = malloc(1000);
    if (early)
        pat_fill(early, 1000, 1);
    zeroed = calloc(1, 300000);
}

__attribute__((constructor)) static void ctor_normal(void)
{
    normal = strdup("made in a constructor");
    grown = malloc(10);
    if (grown) {
        pat_fill(grown, 10, 2);
        char *g = realloc(grown, 100000);
        if (g)
            grown = g;
    }
    late = malloc(64);
}

__attribute__((destructor)) static void dtor(void)
{
    free(late);
}

int main(void)
{
    CHECK(early && pat_ok(early, 1000, 1), "early constructor block");
    CHECK(normal && strcmp(normal, "made in a constructor") == 0, "strdup in constructor");
    CHECK(zeroed, "calloc in constructor");
    for (size_t i = 0; i < 300000; i++)
        CHECK(zeroed[i] == 0, "calloc in constructor not zeroed at %zu", i);
    CHECK(grown && pat_ok(grown, 10, 2), "realloc in constructor lost contents");
    CHECK(malloc_usable_size(grown) >= 100000, "usable size of constructor block");
    free(early);
    free(normal);
    free(zeroed);
    free(grown);
    return 0;
}
