/* Growing arrays and arrays sorted by address (hr_arrays.h). */
#include <stdlib.h>
#include <string.h>

#include "hr_arrays.h"

int hr_grow(void *v, size_t *cap, size_t n, size_t elem, size_t first_cap)
{
    if (n < *cap)
        return 0;
    size_t ncap = *cap ? *cap * 2 : first_cap;
    void *nv = realloc(*(void **)v, ncap * elem);
    if (!nv)
        return -1;
    *(void **)v = nv;
    *cap = ncap;
    return 0;
}

size_t hr_first_above(const void *base, size_t n, size_t elem, uint64_t key)
{
    size_t lo = 0, hi = n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        uint64_t start;
        memcpy(&start, (const char *)base + mid * elem, sizeof start);
        if (start <= key)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

int hr_start_cmp(const void *a, const void *b)
{
    uint64_t x, y;
    memcpy(&x, a, sizeof x);
    memcpy(&y, b, sizeof y);
    return x < y ? -1 : x > y;
}
