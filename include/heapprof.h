/* heapprof's public API, for programs that want to control when profiles are written.
 *
 * The functions live in libheapprof_shim.so. Declared weak, so a program that uses them still
 * links and runs without the shim: test the address before calling.
 *
 *     #include "heapprof.h"
 *     if (heapprof_dump) heapprof_dump();
 */
#ifndef HEAPPROF_H
#define HEAPPROF_H

#ifdef __cplusplus
extern "C" {
#endif

/* Write a complete, self-contained profile of the process as it is now, to the output path
 * followed by ".N" (N = 1, 2, ... per dump). Profiling goes on; the exit profile is still
 * written. Returns 0 on success, -1 when the shim is not profiling, another dump is being
 * written at that moment, or the file could not be written (the reason is on stderr).
 * It may be called from a signal handler: if the signal interrupted the shim on this thread,
 * the profile is written as soon as that call returns, and heapprof_dump returns 0. */
int heapprof_dump(void) __attribute__((weak));

#ifdef __cplusplus
}
#endif

#endif
