/* The word plane of the shadow (shadow.h, plane 2): arming a small block's per-word counters at
 * allocation, and reading them into a per-word histogram at free (disarming) or at a dump. */
#include "shadow/shadow.h"

void hp_shadow_word_arm(const struct hp_shadow *sh, uintptr_t p, size_t size)
{
    if (!sh->hbase)
        return;
    uint8_t *w = hp_shadow_word(sh->hbase, p), *e = w + hp_shadow_words(size);
    /* 8 words a store where the block's words allow: p is 32-aligned, so w is 4-aligned. */
    for (; w < e && ((uintptr_t)w & 7); w++)
        *w = HP_WORD_ARMED;
    for (; w + 8 <= e; w += 8)
        *(uint64_t *)(void *)w = 0x0101010101010101ull * HP_WORD_ARMED;
    for (; w < e; w++)
        *w = HP_WORD_ARMED;
}

static void add(uint64_t *to, uint64_t v, int shared)
{
    if (shared)
        __atomic_fetch_add(to, v, __ATOMIC_RELAXED);
    else
        *to += v;
}

/* Words [w, e) of a block into bins and sat (from word 0, up to len); disarmed when clear. A
 * word that is 0 was not armed (a block made before plane 2 existed): no access of it known. */
static void walk(uint8_t *w, uint8_t *e, uint64_t *bins, uint64_t *sat, size_t len, int clear)
{
    int shared = __atomic_load_n(&hp_shadow_hist_shared, __ATOMIC_RELAXED);
    for (size_t i = 0; w < e; w++, i++) {
        unsigned v = *w;
        if (v <= HP_WORD_ARMED) {
            if (v && clear)
                *w = 0;
            continue;
        }
        if (clear)
            *w = 0;
        if (i >= len)
            continue;
        if (bins)
            add(&bins[i], v - HP_WORD_ARMED, shared);
        if (sat && v == HP_WORD_TOP)
            add(&sat[i], 1, shared);
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
