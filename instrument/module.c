/* One per instrumented module (executable or shared library), built once per mode
 * (HP_RT_MODE: an hp_attach_mode) and linked by heapprof-cc: hidden, so each module runs its
 * own copy, which tells the runtime (and through it the shim) how this module counts and where
 * it is. Priority 1, as clang's module constructor. */
#include "instrument.h"

#ifndef HP_RT_MODE
#error "build with -DHP_RT_MODE=<hp_attach_mode>"
#endif

static void module_ctor(void) { __heapprof_rt_module(HP_RT_MODE, (const void *)module_ctor); }
__attribute__((section(".init_array.00001"), used)) static void (*module_entry)(void) = module_ctor;
