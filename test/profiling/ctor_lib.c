/* A shared library whose constructor allocates, for a program whose own allocator is linked
 * into the executable (ctor_alloc.c with own_malloc.c or jemalloc). The dynamic loader runs
 * this constructor before the constructors of preloaded libraries: the shim must have patched
 * the program's allocator before then, or these blocks are missing from the profile and their
 * frees look foreign. */
#include <stdlib.h>

void *volatile ctor_kept[10];
static void *volatile temp[5];

__attribute__((noinline)) void site_ctor_keep(int i) { ctor_kept[i] = malloc(1000); }
__attribute__((noinline)) void site_ctor_temp(int i) { temp[i] = malloc(2000); }

__attribute__((constructor)) static void ctor_lib_init(void)
{
    for (int i = 0; i < 10; i++)
        site_ctor_keep(i);
    for (int i = 0; i < 5; i++)
        site_ctor_temp(i);
}

/* Called from main: the temporary blocks are freed after the shim is up. */
void ctor_lib_release(void)
{
    for (int i = 0; i < 5; i++)
        free(temp[i]);
}
