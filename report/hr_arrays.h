/* Growing arrays and arrays sorted by address, as the report's tables keep them (arrays.c). */
#ifndef HR_ARRAYS_H
#define HR_ARRAYS_H

#include <stddef.h>
#include <stdint.h>

/* Room for one more element in the array *v of *cap elements of elem bytes holding n: doubled
 * (first_cap the first time) when full. 0, or -1 out of memory (the array unchanged). */
int hr_grow(void *v, size_t *cap, size_t n, size_t elem, size_t first_cap);

/* In an array of n elements of elem bytes, sorted by the uint64_t each starts with (an address
 * range's start): the index of the first element whose start is above key, n when none is; the
 * element before it, if any, is the last one starting at or below key. */
size_t hr_first_above(const void *base, size_t n, size_t elem, uint64_t key);

/* qsort's comparison of elements that start with a uint64_t, by it. */
int hr_start_cmp(const void *a, const void *b);

#endif
