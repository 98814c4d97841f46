/* The public API of heapprof.h: forwards into core/process.c. */
#include "core/core.h"
#include "rt/rt.h"
#include "heapprof.h"

HP_EXPORT int heapprof_dump(void) { return hp_heapprof_dump(); }
