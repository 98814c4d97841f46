/* The shim's own string and memory functions (rt.h): libc's may be interposed or watched by
 * sanitizer runtimes, and none of these may allocate or lock. */
#include "rt/rt.h"

#include <stdint.h>

size_t hp_strlen(const char *s)
{
    size_t n = 0;
    while (s[n])
        n++;
    return n;
}

int hp_strcmp(const char *a, const char *b)
{
    while (*a && *a == *b)
        a++, b++;
    return (unsigned char)*a - (unsigned char)*b;
}

int hp_strncmp(const char *a, const char *b, size_t n)
{
    for (; n; n--, a++, b++) {
        if (*a != *b)
            return (unsigned char)*a - (unsigned char)*b;
        if (!*a)
            return 0;
    }
    return 0;
}

size_t hp_strlcpy(char *dst, const char *src, size_t cap)
{
    size_t n = hp_strlen(src);
    if (cap) {
        size_t c = n < cap - 1 ? n : cap - 1;
        hp_memcpy(dst, src, c);
        dst[c] = 0;
    }
    return n;
}

/* The shim's own memcpy and memset, for its metadata: libc's may be interposed (sanitizer
 * runtimes intercept them and, not seeing the shim's own synchronisation, report its metadata
 * as races; a program may define its own). Eight bytes at a time; GCC must not turn the loops
 * back into calls of the library functions (loop distribution). */
#if defined(__GNUC__) && !defined(__clang__)
#define HP_NO_LIBCALLS __attribute__((optimize("no-tree-loop-distribute-patterns")))
#else
#define HP_NO_LIBCALLS /* clang: -fno-builtin keeps its loop idioms from becoming calls */
#endif

HP_NO_LIBCALLS void *hp_memcpy(void *dst, const void *src, size_t n)
{
    unsigned char *d = dst;
    const unsigned char *s = src;
    for (; n >= 8; n -= 8, d += 8, s += 8) {
        uint64_t w;
        __builtin_memcpy(&w, s, 8); /* one unaligned load and store, even with -fno-builtin */
        __builtin_memcpy(d, &w, 8);
    }
    while (n--)
        *d++ = *s++;
    return dst;
}

HP_NO_LIBCALLS void *hp_memset(void *dst, int c, size_t n)
{
    unsigned char *d = dst;
    uint64_t w = 0x0101010101010101ull * (unsigned char)c;
    for (; n >= 8; n -= 8, d += 8)
        __builtin_memcpy(d, &w, 8);
    while (n--)
        *d++ = (unsigned char)c;
    return dst;
}

HP_NO_LIBCALLS int hp_memcmp(const void *a, const void *b, size_t n)
{
    const unsigned char *x = a, *y = b;
    for (; n; n--, x++, y++)
        if (*x != *y)
            return *x - *y;
    return 0;
}

int hp_parse_u64(const char *s, size_t len, uint64_t *out)
{
    uint64_t v = 0;
    size_t i = 0;
    if (len == 0)
        return -1;
    for (; i < len && s[i] >= '0' && s[i] <= '9'; i++) {
        uint64_t d = (uint64_t)(s[i] - '0');
        if (v > (UINT64_MAX - d) / 10)
            return -1;
        v = v * 10 + d;
    }
    if (i == 0)
        return -1;
    if (i < len) {
        unsigned shift;
        switch (s[i]) {
        case 'k': case 'K': shift = 10; break;
        case 'm': case 'M': shift = 20; break;
        case 'g': case 'G': shift = 30; break;
        default: return -1;
        }
        if (i + 1 != len || v > (UINT64_MAX >> shift))
            return -1;
        v <<= shift;
    }
    *out = v;
    return 0;
}
