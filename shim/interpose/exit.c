/* _exit and _Exit, which end the process without destructors: forwards into core/process.c,
 * which writes the exit profile first. */
#include "core/core.h"
#include "rt/rt.h"

HP_EXPORT void _exit(int status) { hp_exit(status); }
HP_EXPORT void _Exit(int status) { hp_exit(status); }
