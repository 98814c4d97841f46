/* The shim's metadata arena: memory for stacks, tables and thread state comes from mmap under
 * a budget (metadata_budget_mb), never from the user's heap. Blocks are cache-line aligned and
 * zeroed; they are never freed (metadata lives as long as the process). */
#ifndef HP_META_H
#define HP_META_H

#include <stddef.h>
#include <stdint.h>

void hp_meta_init(uint64_t budget_bytes);
/* Zeroed, 64-byte aligned; NULL when the budget or the kernel says no. */
void *hp_meta_alloc(size_t size);
/* The same for a signal handler that may have interrupted this thread inside the arena: gives
 * up (NULL) rather than wait long for the lock, and takes no size beyond a quarter chunk. */
void *hp_meta_alloc_nested(size_t size);
/* Large zeroed region of its own mapping (tables), counted against the budget. */
void *hp_meta_map(size_t size);
/* The errno of the last mmap the arena could not make (0: none failed; a NULL from the
 * functions above is then the budget). */
extern int hp_meta_map_errno;
uint64_t hp_meta_used(void);
/* Bytes of the arena's mappings in memory now (mincore): what the metadata costs in RSS. */
uint64_t hp_meta_resident(void);
uint64_t hp_meta_budget(void);
void hp_meta_fork_prepare(void);
void hp_meta_fork_parent(void);
void hp_meta_fork_child(void);

#endif
