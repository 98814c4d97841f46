/* The cfi unwinder (cfi.c): stack walks through code without frame pointers using .eh_frame,
 * with decoded rules cached per return address. */
#ifndef HP_CFI_H
#define HP_CFI_H

#include <stdint.h>

/* The previous walk of a thread, kept so the next one can stop early: once a frame has the same
 * code address, stack pointer and frame register as a frame of the previous walk, and every
 * stack slot the previous walk read from there on still holds the value it read, the rest of
 * the walk would repeat the previous one exactly, so its frames are copied. Deep stacks (an
 * interpreter's eval loop, a server's request loop) then cost only their changing top. */
#define HP_WALK_MAX 272

struct hp_walk_frame {
    uintptr_t ip, sp, bp;
    uintptr_t slot1, val1, slot2, val2; /* what stepping from this frame read (slot 0: none) */
};

struct hp_walk_cache {
    int n;              /* frames of the previous walk (in buf[cur]); 0: none */
    int truncated;
    int cur;            /* the walk in progress is written to buf[!cur] */
    uintptr_t stack_hi;
    struct hp_walk_frame buf[2][HP_WALK_MAX];
};

void hp_cfi_init(void);
/* Walk from a frame whose return address is ip, with the caller's stack pointer sp (the CFA
 * of the frame just left) and frame register bp. pcs[0] = ip. Stops at the first frame it
 * cannot follow or that leaves [sp, stack_hi). Returns the depth. */
int hp_cfi_walk(uintptr_t ip, uintptr_t sp, uintptr_t bp, uintptr_t stack_hi, uintptr_t *pcs, int max,
                int *truncated, struct hp_walk_cache *wc);

#endif
