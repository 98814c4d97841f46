/* The interning tables of hr_intern.h: open addressing, sized to at most half full. */
#include <stdlib.h>
#include <string.h>

#include "hr_intern.h"

uint64_t hr_hash64(uint64_t x)
{
    /* splitmix64's finaliser: every input bit moves every output bit. */
    x ^= x >> 30;
    x *= 0xbf58476d1ce4e5b9ull;
    x ^= x >> 27;
    x *= 0x94d049bb133111ebull;
    return x ^ (x >> 31);
}

static uint64_t hr_hash_bytes(const char *s, size_t len)
{
    uint64_t h = 0xcbf29ce484222325ull; /* FNV-1a */
    for (size_t i = 0; i < len; i++)
        h = (h ^ (unsigned char)s[i]) * 0x100000001b3ull;
    return hr_hash64(h);
}

static size_t hr_strtab_find(const struct hr_strtab *t, const char *s, size_t len, uint64_t h)
{
    size_t mask = t->nslots - 1, i = h & mask;
    for (;;) {
        uint32_t v = t->slots[i];
        if (v == 0 || (t->lens[v - 1] == len && memcmp(t->strs[v - 1], s, len) == 0))
            return i;
        i = (i + 1) & mask;
    }
}

static int hr_strtab_grow(struct hr_strtab *t)
{
    size_t nslots = t->nslots ? t->nslots * 2 : 1024;
    uint32_t *slots = calloc(nslots, sizeof *slots);
    /* strs and lens keep half as many entries as the slots, so they grow here with the slots
     * (not with hr_grow, element by element); callers read them as parallel arrays. */
    char **strs = realloc(t->strs, nslots / 2 * sizeof *strs);
    if (strs)
        t->strs = strs;
    uint32_t *lens = realloc(t->lens, nslots / 2 * sizeof *lens);
    if (lens)
        t->lens = lens;
    if (!slots || !strs || !lens) {
        free(slots);
        return -1;
    }
    free(t->slots);
    t->slots = slots;
    t->nslots = nslots;
    t->cap = nslots / 2;
    for (size_t k = 0; k < t->n; k++)
        t->slots[hr_strtab_find(t, t->strs[k], t->lens[k], hr_hash_bytes(t->strs[k], t->lens[k]))] =
            (uint32_t)k + 1;
    return 0;
}

int64_t hr_strtab_add(struct hr_strtab *t, const char *s, size_t len)
{
    if (t->n + 1 > t->cap && hr_strtab_grow(t))
        return -1;
    uint64_t h = hr_hash_bytes(s, len);
    size_t i = hr_strtab_find(t, s, len, h);
    if (t->slots[i])
        return t->slots[i] - 1;
    char *copy = malloc(len + 1);
    if (!copy)
        return -1;
    memcpy(copy, s, len);
    copy[len] = 0;
    t->strs[t->n] = copy;
    t->lens[t->n] = (uint32_t)len;
    t->slots[i] = (uint32_t)++t->n;
    return (int64_t)t->n - 1;
}

int64_t hr_strtab_addz(struct hr_strtab *t, const char *s)
{
    return hr_strtab_add(t, s, strlen(s));
}

void hr_strtab_free(struct hr_strtab *t)
{
    for (size_t i = 0; i < t->n; i++)
        free(t->strs[i]);
    free(t->strs);
    free(t->lens);
    free(t->slots);
    *t = (struct hr_strtab){0};
}

static size_t hr_u64map_find(const struct hr_u64map *m, uint64_t key)
{
    size_t mask = m->cap - 1, i = hr_hash64(key) & mask;
    while (m->vals[i] && m->keys[i] != key)
        i = (i + 1) & mask;
    return i;
}

uint32_t hr_u64map_get(const struct hr_u64map *m, uint64_t key)
{
    return m->cap ? m->vals[hr_u64map_find(m, key)] : 0;
}

static int hr_u64map_grow(struct hr_u64map *m)
{
    struct hr_u64map g = {.cap = m->cap ? m->cap * 2 : 1024};
    g.keys = malloc(g.cap * sizeof *g.keys);
    g.vals = calloc(g.cap, sizeof *g.vals);
    if (!g.keys || !g.vals) {
        free(g.keys);
        free(g.vals);
        return -1;
    }
    for (size_t i = 0; i < m->cap; i++) {
        if (m->vals[i]) {
            size_t j = hr_u64map_find(&g, m->keys[i]);
            g.keys[j] = m->keys[i];
            g.vals[j] = m->vals[i];
        }
    }
    g.n = m->n;
    hr_u64map_free(m);
    *m = g;
    return 0;
}

int hr_u64map_put(struct hr_u64map *m, uint64_t key, uint32_t val)
{
    if ((m->n + 1) * 2 > m->cap && hr_u64map_grow(m))
        return -1;
    size_t i = hr_u64map_find(m, key);
    if (!m->vals[i])
        m->n++;
    m->keys[i] = key;
    m->vals[i] = val;
    return 0;
}

void hr_u64map_free(struct hr_u64map *m)
{
    free(m->keys);
    free(m->vals);
    *m = (struct hr_u64map){0};
}
