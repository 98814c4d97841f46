/* The address-keyed tables (pool_table.c), private to core/: blocks that have no shim header,
 * kept by address. One table holds the objects programs report with heapprof.h's
 * heapprof_pool_* calls, the other the blocks of an allocator profiled without headers
 * (headerless.c). Included by core/pool.c, core/headerless.c, core/init.c (fork) and the
 * table's unit test. */
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

/* A table: 64 locked shards. The two are apart because a pool object may start where the
 * allocator's block it was carved from starts. */
struct hp_ptab;
extern struct hp_ptab hp_pool_objs, hp_headerless_blocks;

/* Insert o (o->addr != 0). An object already at that address (reported twice without a free)
 * is replaced and copied to *old: returns 2. 1: inserted; 0: no metadata for it. */
int hp_ptab_insert(struct hp_ptab *t, const struct hp_pool_obj *o, struct hp_pool_obj *old);
/* Take the object at addr out into *out: 1, or 0 when none is there. */
int hp_ptab_remove(struct hp_ptab *t, uintptr_t addr, struct hp_pool_obj *out);
/* Take up to max objects of pool out into out; returns how many. *cursor (0 at the start)
 * says where to go on: call again until it returns 0. */
size_t hp_ptab_take_pool(struct hp_ptab *t, uintptr_t pool, unsigned *cursor, struct hp_pool_obj *out,
                         size_t max);
/* Objects in the table now. */
uint64_t hp_ptab_count(struct hp_ptab *t);
/* Fork: every shard's lock of both tables taken before fork, released in both processes after. */
void hp_ptab_fork_prepare(void);
void hp_ptab_fork_parent(void);
void hp_ptab_fork_child(void);


/* ---- recording (pool.c), for the pool API and headerless.c ---- */
/* The object's free recorded with the profiler (its access figures taken first while the
 * shadow is on). */
void hp_pobj_free(const struct hp_pool_obj *o);
/* A new object at addr recorded (a context from the stack above the shim's frame `frame`, its
 * flag ctx_flag) and put in table t. An object the table held at that address already ends
 * its life now: returns 2 then (1: none was there; 0: no metadata to keep it, not counted). */
int hp_pobj_alloc(struct hp_ptab *t, uintptr_t pool, uintptr_t addr, uint64_t size, uintptr_t frame,
                  uint32_t ctx_flag);

#endif
