/* What core/'s files share beyond core.h: the allocation paths' variants for jemalloc's and
 * mimalloc's APIs, and the lookups init runs. Included only by core/ (and its unit tests). */
#ifndef HP_CORE_INTERNAL_H
#define HP_CORE_INTERNAL_H

#include <stddef.h>
#include <stdint.h>

/* jemalloc's extended API (jemalloc.c): allocate or free passing xflags (mallocx flags without
 * the alignment and zero bits: arena, thread cache) to the backend's mallocx/dallocx when it
 * has them; hp_owns: is p a block of the shim's (bootstrap blocks included)? (alloc.c) */
#define HP_MALLOCX_ZERO 0x40
void *hp_alloc_x(size_t size, size_t align, int zero, int xflags);
void hp_free_x(void *p, int xflags);
int hp_owns(void *p);
/* mimalloc's API (mimalloc_*.c): a block placed at (user + offset) % align == 0 in raw memory
 * from get (NULL: the backend's malloc), and the record of a block the allocator freed
 * wholesale. (alloc.c) */
void *hp_alloc_from(void *(*get)(void *, size_t, int), void *arg, size_t size, size_t align,
                    size_t offset, int zero);
void hp_forget_block(void *raw, size_t size);
/* The shim's live block (user pointer) made from the allocator's block raw of size bytes, or NULL. */
void *hp_block_in(void *raw, size_t size);
/* Free p if the shim made it (1), else leave it alone (0). */
int hp_free_own(void *p);
extern int hp_foreign_expected; /* mimalloc's blocks may reach free(): not reported (alloc.c) */

/* Access profiling (access.c). The allocation paths call these only while hp_shadow_on():
 * a new block's counters cleared and a profiled one registered (the reference for its header's
 * live_ref); a block going away (realloc's old block: h its header's copy) taken from the
 * shadow, with its figures in *acc, and from the registry; a free: that, and the profiler's
 * record of it with the figures. */
struct hp_access;
struct hp_header;
void hp_access_init(void);
uint32_t hp_access_alloc(uintptr_t user, uint64_t size, uint32_t ctx);
void hp_access_take(uintptr_t user, const struct hp_header *h, struct hp_access *acc);
void hp_access_free(uintptr_t user, const struct hp_header *h);

/* An allocator profiled without headers (headerless.c, with hp_headerless): its block p of
 * size bytes recorded by address (a context from the stack above the shim's frame `frame`),
 * its free recorded (before the allocator has the block back), and realloc through its own
 * function with both recorded. */
void hp_hl_alloc(void *p, size_t size, uintptr_t frame);
void hp_hl_free(void *p);
void *hp_hl_realloc(void *p, size_t size, uintptr_t frame);

/* Look mimalloc's own functions up, after the backend is known (mimalloc_lookup.c). */
void hp_mi_init(void);
/* Find glibc's signal functions now, from the constructor: a signal handler that calls them
 * later never runs dlsym, which is not async-signal-safe (signals.c). */
void hp_signals_resolve(void);
/* Start the dump_interval_ms thread, if asked for (process.c). */
void hp_start_interval_thread(void);
/* The value of environment variable name in environ, NULL when unset or before environ is
 * set (getenv may not be usable that early; init.c). */
const char *hp_env_value(const char *name);
/* Say once, at start, what of the heap the shim cannot see: a Go program's (and that it leaves
 * no exit profile), pymalloc's objects, PHP's Zend allocations (unseen.c). */
void hp_note_unseen_heaps(void);
/* Does PYTHONMALLOC's value (NULL: unset) send objects to malloc? USE_ZEND_ALLOC's turn PHP's
 * allocator off? */
int hp_pymalloc_off(const char *pythonmalloc);
int hp_zend_alloc_off(const char *use_zend_alloc);

#endif
