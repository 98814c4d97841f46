/* Frees one block twice. glibc's tcache check aborts the process (SIGABRT); under the shim the
 * runner expects the shim to say so on stderr ("heapprof: ...") and then the same abort. */
#include <stdio.h>
#include <stdlib.h>

static void *volatile sink;

int main(void)
{
    void *p = malloc(40);
    sink = p;
    printf("freeing twice\n");
    fflush(stdout);
    free(p);
    free(sink);
    /* reached only if nobody noticed; allocate so a corrupted free list would show */
    for (int i = 0; i < 10; i++)
        sink = malloc(40);
    printf("double free went unnoticed\n");
    return 0;
}
