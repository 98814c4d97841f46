/* free() must keep errno: programs free between a failing call and reading errno (the shim's
 * bookkeeping may make system calls that overwrite it). Checked for every kind of block. */
#include <errno.h>
#include <malloc.h>
#include <stdlib.h>
#include "testutil.h"

/* Through a volatile pointer: clang would otherwise assume free leaves errno alone and fold the
 * check to true. */
static void (*volatile free_)(void *) = free;

static void free_keeps(void *p, const char *what)
{
    errno = 1234;
    free_(p);
    CHECK(errno == 1234, "free(%s) changed errno to %d", what, errno);
}

int main(void)
{
    free_keeps(NULL, "NULL");
    for (int round = 0; round < 50; round++) {
        free_keeps(malloc(10), "small");
        free_keeps(malloc(5000), "medium");
        free_keeps(malloc(300000), "mmapped");
        free_keeps(malloc(40 << 20), "huge");
        free_keeps(calloc(100, 100), "calloc");
        free_keeps(memalign(4096, 100), "memalign");
        free_keeps(realloc(malloc(10), 100000), "realloc");
        free_keeps(strdup("abc"), "strdup");
    }
    /* other calls that succeed don't promise to keep errno, but a failing realloc must set it */
    void *p = malloc(10);
    errno = 0;
    void *(*volatile realloc_)(void *, size_t) = realloc;
    CHECK(realloc_(p, SIZE_MAX - 4) == NULL && errno == ENOMEM, "realloc failure errno %d", errno);
    free_keeps(p, "block after failed realloc");
    return 0;
}
