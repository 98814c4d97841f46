/* The word plane of the shadow (shadow.h, plane 2): arming a small block's granules and zeroing
 * its word counters at allocation, and reading them into a per-word histogram at free (back to
 * 0) or at a dump. */
#include "shadow/shadow.h"

void hp_shadow_word_arm(const struct hp_shadow *sh, uintptr_t p, size_t size)
{
    if (!sh->hbase || !size)
        return;
    uint64_t *c = hp_shadow_ctr(sh->base, p), *ce = c + hp_shadow_granules(p, size);
    for (; c < ce; c++)
        *c |= HP_SHADOW_ARMED;
    /* Words are left at 0 by the take of the block before (a late access racing a free may
     * leave one): stores only where needed, so a page never written stays without memory;
     * 8 words a load. */
    uint8_t *w = hp_shadow_word(sh->hbase, p), *e = w + hp_shadow_words(size);
    for (; w + 8 <= e; w += 8) {
        uint64_t v;
        __builtin_memcpy(&v, w, 8);
        if (v)
            __builtin_memset(w, 0, 8);
    }
    for (; w < e; w++)
        if (*w)
            *w = 0;
}

static void add(uint64_t *to, uint64_t v, int shared)
{
    if (shared)
        __atomic_fetch_add(to, v, __ATOMIC_RELAXED);
    else
        *to += v;
}

/* Word i with count v into bins and sat (i < len). */
static inline void one(size_t i, unsigned v, uint64_t *bins, uint64_t *sat, size_t len, int shared)
{
    if (i >= len)
        return;
    if (bins)
        add(&bins[i], v, shared);
    if (sat && v == HP_WORD_MAX)
        add(&sat[i], 1, shared);
}

/* Words [w, e) of a block into bins and sat (from word 0, up to len); back to 0 when clear.
 * 8 words a load, and only the words not 0 looked at: most words of most blocks are (cold
 * fields, the untouched end of a buffer). */
static void walk(uint8_t *w, uint8_t *e, uint64_t *bins, uint64_t *sat, size_t len, int clear)
{
    int shared = __atomic_load_n(&hp_shadow_hist_shared, __ATOMIC_RELAXED);
    size_t i = 0;
    for (; w + 8 <= e; w += 8, i += 8) {
        uint64_t v;
        __builtin_memcpy(&v, w, 8);
        if (!v)
            continue;
        if (clear)
            __builtin_memset(w, 0, 8);
        while (v) {
            unsigned b = (unsigned)__builtin_ctzll(v) / 8; /* little-endian: byte b, word i + b */
            one(i + b, (unsigned)(v >> (b * 8)) & 0xff, bins, sat, len, shared);
            v &= ~((uint64_t)0xff << (b * 8));
        }
    }
    for (; w < e; w++, i++) {
        unsigned v = *w;
        if (!v)
            continue;
        if (clear)
            *w = 0;
        one(i, v, bins, sat, len, shared);
    }
}

void hp_shadow_word_take(const struct hp_shadow *sh, uintptr_t p, size_t size, uint64_t *bins,
                         uint64_t *sat, size_t len)
{
    if (!sh->hbase)
        return;
    uint8_t *w = hp_shadow_word(sh->hbase, p);
    walk(w, w + hp_shadow_words(size), bins, sat, len, 1);
}

void hp_shadow_word_peek(const struct hp_shadow *sh, uintptr_t p, size_t size, uint64_t *bins,
                         uint64_t *sat, size_t len)
{
    if (!sh->hbase)
        return;
    uint8_t *w = hp_shadow_word(sh->hbase, p);
    walk(w, w + hp_shadow_words(size), bins, sat, len, 0);
}
