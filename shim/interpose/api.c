/* The public API of heapprof.h. */
#include "core/core.h"
#include "profile/profile.h"
#include "dump/dump.h"
#include "rt/rt.h"
#include "heapprof.h"

HP_EXPORT int heapprof_dump(void)
{
    if (!hp_ready() || !hp_profiling)
        return -1;
    return hp_dump_request(HPF_DUMP_API); /* also from a signal handler */
}
