/* heapprof's public API, for programs that want to control when profiles are written, and
 * for programs with pool allocators of their own, which report their objects.
 *
 * The functions live in libheapprof_shim.so. Declared weak, so a program that uses them still
 * links and runs without the shim: test the address before calling (HEAPPROF_POOL_* below do).
 *
 *     #include "heapprof.h"
 *     if (heapprof_dump) heapprof_dump();
 */
#ifndef HEAPPROF_H
#define HEAPPROF_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Write a complete, self-contained profile of the process as it is now, to the output path
 * followed by ".N" (N = 1, 2, ... per dump). Profiling goes on; the exit profile is still
 * written. Returns 0 on success, -1 when the shim is not profiling, another dump is being
 * written at that moment, or the file could not be written (the reason is on stderr).
 * It may be called from a signal handler: if the signal interrupted the shim on this thread,
 * the profile is written as soon as that call returns, and heapprof_dump returns 0. */
int heapprof_dump(void) __attribute__((weak));

/* ---- Pool and arena allocators ----
 * Objects a program carves out of memory of its own (an arena, a slab, a free list) never pass
 * through malloc: reported here, each is profiled like a block of malloc's, with a context from
 * the stack of the report call, its lifetime, its share of the live heap and its peak, a leak
 * when still live at exit, access counts in instrumented programs, and marked as a pool object
 * in the reports. Objects are known by address: report the allocation after the object is
 * carved out and the free before its memory is reused. Thread-safe; a free of an address that
 * was never reported (or already freed) is counted in the profile's summary, nothing more.
 * The pool's own chunks, if they come from malloc, are counted too: see docs/USAGE.md. */

/* The object at addr (size bytes) now belongs to the program; pool is the handle of its pool,
 * for heapprof_pool_destroy (NULL: none). An address reported twice without a free ends the
 * first object's life. */
void heapprof_pool_alloc(const void *pool, const void *addr, size_t size) __attribute__((weak));
/* The object at addr is given back to its pool. */
void heapprof_pool_free(const void *addr) __attribute__((weak));
/* The object at addr now has size bytes, in place: its old life ends and a new one starts at
 * this call's stack, as realloc's does. (A resize that moves is a free and an alloc.) */
void heapprof_pool_resize(const void *addr, size_t size) __attribute__((weak));
/* A pool comes into being (optional: a pool is only the handle its objects carry). */
void heapprof_pool_create(const void *pool) __attribute__((weak));
/* The pool goes away: every object still reported for it is freed. Walks the whole table of
 * objects: for pools that go away now and then, not one per request. */
void heapprof_pool_destroy(const void *pool) __attribute__((weak));

/* The same calls, doing nothing when the program runs without the shim. */
#define HEAPPROF_POOL_ALLOC(pool, addr, size) \
    do { if (heapprof_pool_alloc) heapprof_pool_alloc((pool), (addr), (size)); } while (0)
#define HEAPPROF_POOL_FREE(addr) \
    do { if (heapprof_pool_free) heapprof_pool_free(addr); } while (0)
#define HEAPPROF_POOL_RESIZE(addr, size) \
    do { if (heapprof_pool_resize) heapprof_pool_resize((addr), (size)); } while (0)
#define HEAPPROF_POOL_CREATE(pool) \
    do { if (heapprof_pool_create) heapprof_pool_create(pool); } while (0)
#define HEAPPROF_POOL_DESTROY(pool) \
    do { if (heapprof_pool_destroy) heapprof_pool_destroy(pool); } while (0)

#ifdef __cplusplus
}
#endif

#endif
