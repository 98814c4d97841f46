/* The bootstrap arena: serves allocations made before the real allocator is known (while the
 * shim resolves it with dlsym, or while another thread is doing so). Its blocks are recognised
 * by address for the life of the process: free is a no-op, realloc copies out, usable size is
 * answered from a small header. Lock-free (CAS bump), never blocks. */
#ifndef HP_BOOTSTRAP_H
#define HP_BOOTSTRAP_H

#include <stddef.h>
#include <stdint.h>

/* align: power of two; 0 means the default (32). NULL when exhausted or on overflow. */
void *hp_boot_alloc(size_t size, size_t align);
/* Non-zero when p lies in the arena (any address inside a block counts). */
int hp_boot_owns(const void *p);
/* Requested size of the block starting at p (p must be owned). */
size_t hp_boot_size(const void *p);
/* Bytes handed out so far. */
uint64_t hp_boot_bytes(void);

#endif
