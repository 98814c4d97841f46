/* The public API of heapprof.h. */
#include "hp.h"
#include "heapprof.h"
#include "hpf_format.h"

HP_EXPORT int heapprof_dump(void)
{
    if (!hp_ready() || !hp_profiling)
        return -1;
    return hp_dump_request(HPF_DUMP_API); /* also from a signal handler */
}
