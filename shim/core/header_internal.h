/* The 32-byte chunk header placed immediately before every user block (the RFC's ChunkHeader).
 *
 *   underlying block (from the backend)
 *   |<--------------- base_off --------------->|
 *   +-------------------+------------------------+----------------------------------+
 *   | padding (0..align)|  struct hp_header (32) |  user data (requested size)       |
 *   +-------------------+------------------------+----------------------------------+
 *   ^ raw                                        ^ user pointer, 32-byte aligned (or more)
 *
 * The fields checked to recognise our blocks (state, base_off, check) sit in the last 9 bytes,
 * because allocators write their free-list links at the start of a freed block: after a free,
 * glibc's tcache and bins leave those bytes alone, so a double free is still recognised. */
#ifndef HP_HEADER_H
#define HP_HEADER_H

#include <stdint.h>

#include "rt/rt.h"

#define HP_HEADER_SIZE 32u
#define HP_MIN_ALIGN 32u
#define HP_MAX_REQUEST (((uint64_t)1 << 47) - 1) /* larger than any x86_64 user address space */
#define HP_MAX_ALIGN ((uint64_t)1 << 31) /* user - raw must fit base_off */

enum { HP_STATE_LIVE = 0xA7, HP_STATE_FREED = 0xF4 };

struct hp_header {
    uint64_t size_cpu;    /* requested size in bits 0..47, allocating cpu in bits 48..63 */
    uint32_t context_id;  /* allocation context (stack depot id); 0: not profiled */
    uint32_t live_ref;    /* while the shadow is on, the block's entry in the registry of live
                           * blocks (shadow/live.c); 0: none */
    uint32_t alloc_ms;    /* ms since the shim started */
    uint16_t reserved;
    uint8_t from_memalign; /* 1: the block came from an aligned request (raw != user - 32 - pad) */
    uint8_t state;         /* HP_STATE_* */
    uint32_t base_off;     /* user - raw in bytes: how to find the underlying block */
    uint32_t check;        /* hp_header_check(user, base_off) */
};

_Static_assert(sizeof(struct hp_header) == HP_HEADER_SIZE, "header must be 32 bytes");

extern uint64_t hp_secret;

static inline struct hp_header *hp_hdr(void *user) { return (struct hp_header *)user - 1; }

static inline uint32_t hp_header_check(const void *user, uint32_t base_off)
{
    /* One multiply: a foreign block matches only by chance (2^-32) however good the mixing. */
    return (uint32_t)((((uintptr_t)user ^ hp_secret) * 0x9e3779b97f4a7c15ull) >> 32) ^ base_off;
}

static inline uint64_t hp_hdr_size(const struct hp_header *h) { return h->size_cpu & HP_MAX_REQUEST; }
static inline uint32_t hp_hdr_cpu(const struct hp_header *h) { return (uint32_t)(h->size_cpu >> 48); }
static inline void *hp_hdr_raw(void *user, const struct hp_header *h)
{
    return (char *)user - h->base_off;
}

#endif
