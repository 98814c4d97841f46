/* What each module of the CMake test does: make a block of n bytes at its own site, write
 * every byte once (one-byte volatile stores: one access each in every build mode), hand it
 * back; the caller frees it. */
#ifndef HP_CMAKE_BLOCKS_H
#define HP_CMAKE_BLOCKS_H
#include <stddef.h>
#ifdef __cplusplus
extern "C" {
#endif
void *site_cvec(size_t n);    /* shared C library */
void *site_cxxitems(size_t n); /* shared C++ library (operator new[]) */
void site_cxxitems_free(void *p);
void *site_counts(size_t n);  /* static library */
static inline void write_all(void *p, size_t n)
{
    volatile unsigned char *b = (volatile unsigned char *)p;
    for (size_t i = 0; i < n; i++)
        b[i] = (unsigned char)i;
}
#ifdef __cplusplus
}
#endif
#endif
