/* The access test programs' view of test/access/probe.c (preloaded in phase 1): weak, so the
 * programs run the same without it. */
#ifndef HP_ACCESS_PROBE_H
#define HP_ACCESS_PROBE_H

#include <stddef.h>
#include <stdint.h>

struct hp_probe_sum {
    uint64_t accesses, writes, granules, touched; /* = struct hp_shadow_sum */
};
void heapprof_probe_clear(const void *p, size_t size) __attribute__((weak));
void heapprof_probe_take(const void *p, size_t size, struct hp_probe_sum *out) __attribute__((weak));
unsigned heapprof_probe_modes(void) __attribute__((weak));

#endif
