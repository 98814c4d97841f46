/* An uninstrumented program (built with -DMAIN) using a library built with gcc's
 * -fsanitize=address: it runs only with the ASan runtime in LD_PRELOAD, which heapprof-run
 * must keep in front of the shim. site_lib: 10 blocks of 32 bytes, freed. */
#include <stdlib.h>

#ifdef MAIN
void site_lib(void);
int main(void)
{
    site_lib();
    return 0;
}
#else
void *volatile keep;
__attribute__((noinline)) void site_lib(void)
{
    for (int i = 0; i < 10; i++) {
        keep = malloc(32);
        free(keep);
    }
}
#endif
