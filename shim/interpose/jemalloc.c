/* jemalloc's extended API (mallocx and friends), for programs written against it: each a
 * one-line forward into core/jemalloc.c (the flags) or the C paths. */
#include "core/core.h"
#include "rt/rt.h"

#include <stddef.h>

HP_EXPORT void *mallocx(size_t size, int flags) { return hp_mallocx(size, flags); }
HP_EXPORT void dallocx(void *p, int flags) { hp_dallocx(p, flags); }
/* (size unused: the backend's block is larger than the size the program knows) */
HP_EXPORT void sdallocx(void *p, size_t size, int flags) { (void)size; hp_dallocx(p, flags); }
HP_EXPORT size_t sallocx(const void *p, int flags) { (void)flags; return hp_usable_size((void *)p); }
HP_EXPORT void *rallocx(void *p, size_t size, int flags) { return hp_rallocx(p, size, flags); }
HP_EXPORT size_t xallocx(void *p, size_t size, size_t extra, int flags)
{
    return hp_xallocx(p, size, extra, flags);
}
HP_EXPORT size_t nallocx(size_t size, int flags) { return hp_nallocx(size, flags); }
