/* The public API of heapprof.h. */
#include "hp.h"
#include "heapprof.h"
#include "hpf_format.h"

HP_EXPORT int heapprof_dump(void)
{
    if (!hp_ready() || !hp_profiling)
        return -1;
    if (hp_tls.depth) {
        /* Called from a signal handler that interrupted the shim on this thread, which may
         * hold its locks: the interrupted call writes the profile on its way out. */
        hp_dump_pending = HPF_DUMP_API;
        return 0;
    }
    return hp_dump(HPF_DUMP_API);
}
