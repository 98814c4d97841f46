/* Linked into a program built without -fPIE: code that takes the addresses of the allocation
 * functions makes PLT entries of the program stand for them (dlsym answers those), and with
 * lazy binding their slots stay unbound until the first call through them. The patcher must
 * still find and patch the allocator's own functions. */
#include <malloc.h>
#include <stdlib.h>

void *(*volatile take_malloc)(size_t);
void (*volatile take_free)(void *);
void *(*volatile take_calloc)(size_t, size_t);
void *(*volatile take_realloc)(void *, size_t);
int (*volatile take_posix_memalign)(void **, size_t, size_t);
size_t (*volatile take_usable)(void *);

__attribute__((constructor)) static void take(void)
{
    take_malloc = malloc;
    take_free = free;
    take_calloc = calloc;
    take_realloc = realloc;
    take_posix_memalign = posix_memalign;
    take_usable = malloc_usable_size;
}
