/* _exit and _Exit, interposed: they end the process without running destructors, so the exit
 * profile is written here first. That is how most forked children end (after fork, a child
 * that does not exec is told to leave by _exit, not to flush its parent's stdio twice). Then
 * the process ends the way glibc's _exit does, with exit_group. */
#include "core/core.h"
#include "profile/profile.h"
#include "dump/dump.h"
#include "rt/rt.h"

#include <sys/syscall.h>
#include <unistd.h>

static __attribute__((noreturn)) void end(int status)
{
    if (__atomic_load_n(&hp_init_state, __ATOMIC_ACQUIRE) == HP_INIT_DONE && hp_profiling)
        hp_dump_at__exit();
    for (;;) {
        syscall(SYS_exit_group, status);
        syscall(SYS_exit, status);
    }
}

HP_EXPORT void _exit(int status) { end(status); }
HP_EXPORT void _Exit(int status) { end(status); }
