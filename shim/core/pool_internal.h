/* The pool API's table (pool_table.c), private to core/: the objects programs report with
 * heapprof.h's heapprof_pool_* calls, kept by address because they have no shim header.
 * Included by core/pool.c, core/init.c (fork) and the table's unit test. */
#ifndef HP_POOL_INTERNAL_H
#define HP_POOL_INTERNAL_H

#include <stddef.h>
#include <stdint.h>

/* One live object: what its free needs (the header fields of a block of the shim's). */
struct hp_pool_obj {
    uintptr_t addr;   /* the user pointer the program reported; 0 marks an empty slot */
    uintptr_t pool;   /* the pool handle given with it (0: none) */
    uint64_t size;    /* the reported size */
    uint32_t ctx;     /* allocation context (0: not profiled) */
    uint32_t alloc_ms;
    uint32_t cpu;
    uint32_t live_ref; /* its entry in the shadow's registry of live blocks (0: none) */
};

/* Insert o (o->addr != 0). An object already at that address (reported twice without a free)
 * is replaced and copied to *old: returns 2. 1: inserted; 0: no metadata for it. */
int hp_ptab_insert(const struct hp_pool_obj *o, struct hp_pool_obj *old);
/* Take the object at addr out into *out: 1, or 0 when none is there. */
int hp_ptab_remove(uintptr_t addr, struct hp_pool_obj *out);
/* Take up to max objects of pool out into out; returns how many. *cursor (0 at the start)
 * says where to go on: call again until it returns 0. */
size_t hp_ptab_take_pool(uintptr_t pool, unsigned *cursor, struct hp_pool_obj *out, size_t max);
/* Objects in the table now. */
uint64_t hp_ptab_count(void);
/* Fork: every shard's lock taken before fork, released in both processes after. */
void hp_ptab_fork_prepare(void);
void hp_ptab_fork_parent(void);
void hp_ptab_fork_child(void);

#endif
