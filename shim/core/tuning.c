/* The allocator's tuning and statistics functions (mallopt, mallinfo, malloc_trim, ...): they
 * belong to the allocator under the shim, which answers them once init has found it. */
#include "core/core.h"
#include "backend/backend.h"
#include "rt/rt.h"

#include <errno.h>

int hp_mallopt(int param, int value)
{
    return hp_ready() && hp_be.mallopt ? hp_be.mallopt(param, value) : 0;
}

struct mallinfo hp_mallinfo(void)
{
    struct mallinfo mi = {0};
    return hp_ready() && hp_be.mallinfo ? hp_be.mallinfo() : mi;
}

struct mallinfo2 hp_mallinfo2(void)
{
    struct mallinfo2 mi = {0};
    return hp_ready() && hp_be.mallinfo2 ? hp_be.mallinfo2() : mi;
}

int hp_malloc_trim(size_t pad) { return hp_ready() && hp_be.malloc_trim ? hp_be.malloc_trim(pad) : 0; }

void hp_malloc_stats(void)
{
    if (hp_ready() && hp_be.malloc_stats)
        hp_be.malloc_stats();
}

int hp_malloc_info(int options, FILE *fp)
{
    if (hp_ready() && hp_be.malloc_info)
        return hp_be.malloc_info(options, fp);
    errno = ENOSYS;
    return -1;
}
