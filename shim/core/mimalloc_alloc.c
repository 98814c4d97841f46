/* mimalloc's allocation functions without a heap or an alignment: mi_malloc, mi_zalloc, the
 * count * size forms, the string copies, and the C++ forms (mi_new...). */
#include "core/mimalloc_internal.h"

#include <limits.h>
#include <stdlib.h>
#include <string.h>

/* A copy of the len bytes at s followed by a terminating zero of zlen bytes. */
static void *dup_bytes(const void *s, size_t len, size_t zlen)
{
    char *p = hp_alloc(len + zlen, 0, 0);
    if (p) {
        memcpy(p, s, len);
        memset(p + len, 0, zlen);
    }
    return p;
}

SIMPLE(mi_malloc, (size_t n), n, hp_alloc(n, 0, 0))

SIMPLE(mi_malloc_small, (size_t n), n, hp_alloc(n, 0, 0))

SIMPLE(mi_zalloc, (size_t n), n, hp_alloc(n, 0, 1))

SIMPLE(mi_zalloc_small, (size_t n), n, hp_alloc(n, 0, 1))

/* The count * size forms: an overflow is mimalloc's to answer (its error handler). */
#define COUNTED(name, zero) \
    COUNTED_FORM(name, (size_t c, size_t n), 0, hp_alloc(t, 0, zero), c, n)
COUNTED(mi_calloc, 1)
COUNTED(mi_mallocn, 0)
#undef COUNTED

char *hp_mi_strdup(const void *ra, const char *s)
{
    ENTRY(mi_strdup, s);
    return s ? dup_bytes(s, strlen(s), 1) : NULL;
}

char *hp_mi_strndup(const void *ra, const char *s, size_t n)
{
    ENTRY(mi_strndup, s, n);
    return s ? dup_bytes(s, strnlen(s, n), 1) : NULL;
}

unsigned char *hp_mi_mbsdup(const void *ra, const unsigned char *s)
{
    ENTRY(mi_mbsdup, s);
    return s ? dup_bytes(s, strlen((const char *)s), 1) : NULL;
}

unsigned short *hp_mi_wcsdup(const void *ra, const unsigned short *s)
{
    ENTRY(mi_wcsdup, s);
    if (!s)
        return NULL;
    size_t len = 0;
    while (s[len])
        len++;
    return dup_bytes(s, len * sizeof *s, sizeof *s);
}

char *hp_mi_realpath(const void *ra, const char *name, char *resolved)
{
    ENTRY(mi_realpath, name, resolved);
    if (resolved)
        return realpath(name, resolved);
    char buf[PATH_MAX];
    if (!realpath(name, buf))
        return NULL;
    return dup_bytes(buf, strlen(buf), 1);
}

/* ---------- C++ ---------- */

void *hp_mi_new(const void *ra, size_t n)
{
    ENTRY(mi_new, n);
    return hp_new(n, 0, 0);
}

void *hp_mi_new_nothrow(const void *ra, size_t n)
{
    ENTRY(mi_new_nothrow, n);
    return hp_new(n, 0, 1);
}

void *hp_mi_new_aligned(const void *ra, size_t n, size_t a)
{
    ENTRY(mi_new_aligned, n, a);
    if (!valid(a, 0) && REAL(mi_new_aligned))
        return hp_mi_real.mi_new_aligned(n, a);
    return hp_new(n, a, 0);
}

void *hp_mi_new_aligned_nothrow(const void *ra, size_t n, size_t a)
{
    ENTRY(mi_new_aligned_nothrow, n, a);
    if (!valid(a, 0) && REAL(mi_new_aligned_nothrow))
        return hp_mi_real.mi_new_aligned_nothrow(n, a);
    return hp_new(n, a, 1);
}

void *hp_mi_new_n(const void *ra, size_t c, size_t n)
{
    ENTRY(mi_new_n, c, n);
    size_t t;
    if (mul_over(c, n, &t) && REAL(mi_new_n))
        return hp_mi_real.mi_new_n(c, n);
    return hp_new(mul_over(c, n, &t) ? SIZE_MAX : t, 0, 0);
}
