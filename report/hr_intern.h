/* Interning tables for the export formats (intern.c): a string table that numbers each
 * distinct string once (pprof's string_table, DHAT's ftbl), and a map from 64-bit keys to
 * numbers (locations by address, functions by name and file). */
#ifndef HR_INTERN_H
#define HR_INTERN_H

#include <stddef.h>
#include <stdint.h>

struct hr_strtab {
    char **strs;    /* copies, NUL-terminated (strings holding NUL keep their length) */
    uint32_t *lens;
    size_t n, cap;
    uint32_t *slots; /* open addressing: index + 1, 0 empty */
    size_t nslots;
};

/* The number of s (len bytes) in t, added when new; -1 when out of memory. */
int64_t hr_strtab_add(struct hr_strtab *t, const char *s, size_t len);
/* The same for a NUL-terminated string. */
int64_t hr_strtab_addz(struct hr_strtab *t, const char *s);
void hr_strtab_free(struct hr_strtab *t);

struct hr_u64map {
    uint64_t *keys;
    uint32_t *vals; /* 0: empty slot, so values stored must be > 0 */
    size_t n, cap;
};

/* The value of key, or 0 when absent. */
uint32_t hr_u64map_get(const struct hr_u64map *m, uint64_t key);
/* Sets key to val (> 0). Returns 0, or -1 when out of memory. */
int hr_u64map_put(struct hr_u64map *m, uint64_t key, uint32_t val);
void hr_u64map_free(struct hr_u64map *m);

/* A 64-bit mix of a 64-bit value (for hash keys made of several numbers). */
uint64_t hr_hash64(uint64_t x);

#endif
