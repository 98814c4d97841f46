/* pipe2, interposed: libunwind (loaded privately for unwinder=libunwind) makes its address-check
 * pipe with it, and unwind/ moves the ends of that one pipe out of the program's descriptor
 * numbers (hp_unwind_pipe_made). Every other call goes straight through. */
#include "unwind/unwind.h"
#include "backend/backend.h"
#include "rt/rt.h"

#include <errno.h>

HP_EXPORT int pipe2(int fds[2], int flags)
{
    static void *real;
    uintptr_t from = (uintptr_t)__builtin_return_address(0);
    int (*fn)(int *, int) = (int (*)(int *, int))hp_next_sym(&real, "pipe2");
    if (!fn) {
        errno = ENOSYS;
        return -1;
    }
    int r = fn(fds, flags);
    if (r == 0)
        hp_unwind_pipe_made(from, fds);
    return r;
}
