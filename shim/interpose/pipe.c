/* pipe2, interposed: libunwind (loaded privately for unwinder=libunwind) makes its address-check
 * pipe with it, and the shim moves the ends of that one pipe out of the program's descriptor
 * numbers (core/process.c). Every other call goes straight through. */
#include "core/core.h"
#include "rt/rt.h"

HP_EXPORT int pipe2(int fds[2], int flags)
{
    return hp_pipe2(fds, flags, (uintptr_t)__builtin_return_address(0));
}
