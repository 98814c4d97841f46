/* The public API of heapprof.h: forwards into core/process.c (heapprof_dump) and core/pool.c
 * (the pool API). */
#include "core/core.h"
#include "rt/rt.h"
#include "heapprof.h"

HP_EXPORT int heapprof_dump(void) { return hp_heapprof_dump(); }

/* The pool API: forwards into core/pool.c. */
HP_EXPORT void heapprof_pool_create(const void *pool) { hp_pool_create((uintptr_t)pool); }
HP_EXPORT void heapprof_pool_destroy(const void *pool) { hp_pool_destroy((uintptr_t)pool); }
HP_EXPORT void heapprof_pool_alloc(const void *pool, const void *addr, size_t size)
{
    hp_pool_alloc((uintptr_t)pool, (uintptr_t)addr, size);
}
HP_EXPORT void heapprof_pool_free(const void *addr) { hp_pool_free((uintptr_t)addr); }
HP_EXPORT void heapprof_pool_resize(const void *addr, size_t size) { hp_pool_resize((uintptr_t)addr, size); }
