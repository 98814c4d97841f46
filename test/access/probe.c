/* Test-only preload standing in for the shim's access half until phase 2 wires shim/shadow/
 * into the shim: the real attach (shim/shadow/attach.c) and shadow code, plus two hooks the
 * access test programs call through weak references to read and clear a block's counters. */
#include "shadow/attach.h"
#include "shadow/shadow.h"

#define PROBE_API __attribute__((visibility("default")))

PROBE_API void heapprof_probe_clear(const void *p, size_t size);
PROBE_API void heapprof_probe_take(const void *p, size_t size, struct hp_shadow_sum *out);
PROBE_API unsigned heapprof_probe_modes(void);
PROBE_API int heapprof_shadow_attach(struct hp_attach *a);

/* The shim's export (shim/interpose/) is a forward of the same kind. */
int heapprof_shadow_attach(struct hp_attach *a) { return hp_shadow_attach(a); }

void heapprof_probe_clear(const void *p, size_t size)
{
    hp_shadow_clear(&hp_shadow, (uintptr_t)p, size);
}

void heapprof_probe_take(const void *p, size_t size, struct hp_shadow_sum *out)
{
    hp_shadow_take(&hp_shadow, (uintptr_t)p, size, out, NULL, 0);
}

unsigned heapprof_probe_modes(void) { return hp_shadow_modes; }
