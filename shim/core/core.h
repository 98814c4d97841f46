/* shim/core: init, the allocation paths and what every interposed function does. Each entry
 * point in interpose/ is a short forward to a function here; the functions here put the
 * 32-byte header (header_internal.h) in front of blocks from the backend, hand each allocation
 * and free to the profiler, and never call back into an entry point (but syscall(3), the
 * shim's raw system call everywhere, whose entry point is a few instructions of assembly). */
#ifndef HP_CORE_H
#define HP_CORE_H

#include <malloc.h>
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

#include "rt/rt.h"

/* ---- init (init.c) ---- */
enum { HP_INIT_NONE = 0, HP_INIT_RUNNING = 1, HP_INIT_DONE = 2 };
extern int hp_init_state;
extern int hp_passthrough;    /* another allocator won symbol resolution: forward only */
extern int hp_realloc_zero_frees; /* backend's realloc(p, 0) frees and returns NULL */
/* Returns 1 when the shim is ready; 0 while init runs (caller must use the bootstrap arena). */
int hp_init_slow(void);
static inline int hp_ready(void)
{
    if (HP_LIKELY(__atomic_load_n(&hp_init_state, __ATOMIC_ACQUIRE) == HP_INIT_DONE))
        return 1;
    return hp_init_slow();
}

/* The shim's own malloc: defined beside malloc in interpose/malloc.c (an alias can only name a
 * function of its own file); unit tests provide their own. */
void *hp_self_malloc_addr(void);

/* ---- the C API (alloc.c, memalign.c, libc.c, tuning.c) ---- */
void *hp_alloc(size_t size, size_t align, int zero);
void hp_free(void *p);
void *hp_realloc(void *p, size_t size);
size_t hp_usable_size(void *p);
/* count * size, ENOMEM when that overflows. */
void *hp_calloc(size_t n, size_t size);
void *hp_reallocarray(void *p, size_t n, size_t size);
/* The aligned allocations, with the allocator's rules for odd alignments (memalign.c). */
void *hp_memalign(size_t align, size_t size);
void *hp_aligned_alloc(size_t align, size_t size);
int hp_posix_memalign(void **out, size_t align, size_t size);
void *hp_valloc(size_t size);
void *hp_pvalloc(size_t size);
/* glibc's __libc_* names (libc.c): glibc's own functions with an allocator in front of the
 * shim, the shim's paths otherwise. */
void *hp_libc_malloc(size_t size);
void hp_libc_free(void *p);
void *hp_libc_calloc(size_t n, size_t size);
void *hp_libc_realloc(void *p, size_t size);
void *hp_libc_memalign(size_t align, size_t size);
int hp_libc_posix_memalign(void **out, size_t align, size_t size);
void *hp_libc_valloc(size_t size);
void *hp_libc_pvalloc(size_t size);
/* Tuning and statistics: the allocator's own (tuning.c). */
int hp_mallopt(int param, int value);
struct mallinfo hp_mallinfo(void);
struct mallinfo2 hp_mallinfo2(void);
int hp_malloc_trim(size_t pad);
void hp_malloc_stats(void);
int hp_malloc_info(int options, FILE *fp);

/* ---- C++ operator new (new.c); delete is hp_free ---- */
/* align: 0 for the forms without one. The new_handler is called until an allocation succeeds;
 * without one, std::bad_alloc is thrown, or NULL returned when nothrow. */
void *hp_new(size_t size, size_t align, int nothrow);

/* ---- jemalloc's extended API (jemalloc.c), with jemalloc's flags; sallocx is
 * hp_usable_size, sdallocx hp_dallocx ---- */
void *hp_mallocx(size_t size, int flags);
void *hp_rallocx(void *p, size_t size, int flags);
size_t hp_xallocx(void *p, size_t size, size_t extra, int flags);
void hp_dallocx(void *p, int flags);
size_t hp_nallocx(size_t size, int flags);

/* ---- internal paths for the APIs of other allocators (alloc.c) ---- */
/* jemalloc's extended API (ext.c): allocate or free passing xflags (mallocx flags without the
 * alignment and zero bits: arena, thread cache) to the backend's mallocx/dallocx when it has
 * them; hp_owns: is p a block of the shim's (bootstrap blocks included)? */
#define HP_MALLOCX_ZERO 0x40
void *hp_alloc_x(size_t size, size_t align, int zero, int xflags);
void hp_free_x(void *p, int xflags);
int hp_owns(void *p);
/* mimalloc's API (mi.c): a block placed at (user + offset) % align == 0 in raw memory from
 * get (NULL: the backend's malloc), and the record of a block the allocator freed wholesale. */
void *hp_alloc_from(void *(*get)(void *, size_t, int), void *arg, size_t size, size_t align,
                    size_t offset, int zero);
void hp_forget_block(void *raw, size_t size);
/* The shim's live block (user pointer) made from the allocator's block raw of size bytes, or NULL. */
void *hp_block_in(void *raw, size_t size);
/* Free p if the shim made it (1), else leave it alone (0). */
int hp_free_own(void *p);
/* Look mimalloc's own functions up (after the backend is known). */
void hp_mi_init(void);
extern int hp_foreign_expected; /* mimalloc's blocks may reach free(): not reported */

#endif
