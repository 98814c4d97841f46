/* Linked into executables only (a shared object may not have a .preinit_array): sets the
 * shadow up before any library's constructor runs, so instrumented code of the executable that
 * such a constructor calls already has it. */
#include "instrument.h"

static void rt_preinit(void) { hp_rt_init(); }
__attribute__((section(".preinit_array"), used)) static void (*rt_preinit_entry)(void) = rt_preinit;
