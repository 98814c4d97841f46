/* The cfi unwinder (cfi.c): stack walks through code without frame pointers using .eh_frame,
 * with decoded rules cached per return address. */
#ifndef HP_CFI_H
#define HP_CFI_H

#include <stdint.h>

void hp_cfi_init(void);
/* Walk from a frame whose return address is ip, with the caller's stack pointer sp (the CFA
 * of the frame just left) and frame register bp. pcs[0] = ip. Stops at the first frame it
 * cannot follow or that leaves [sp, stack_hi). Returns the depth. */
int hp_cfi_walk(uintptr_t ip, uintptr_t sp, uintptr_t bp, uintptr_t stack_hi, uintptr_t *pcs, int max,
                int *truncated);

#endif
