/* The instrumentation runtime's entry (shadow/attach.h): instrumented modules announce
 * themselves and get the access shadow. A forward into core/access.c. */
#include "core/core.h"
#include "rt/rt.h"

struct hp_attach;
HP_EXPORT int heapprof_shadow_attach(struct hp_attach *a);
HP_EXPORT int heapprof_shadow_attach(struct hp_attach *a) { return hp_access_attach(a); }
