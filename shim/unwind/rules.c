/* The cfi walk's rule caches: decoded rules kept by code address in a lock-free cache shared
 * by every thread, and in a small cache of each thread's own (hp_thread_rule), emptied when
 * code is unloaded. */
#include "unwind/unwind_internal.h"

#if defined(__x86_64__)

/* The shared cache: open addressing, keyed by pc; a slot's rule is stored before its key is
 * published. A full neighbourhood just means decoding again; entries are removed only all at
 * once, when code is unloaded (hp_cfi_code_unloaded). */
#define PROBES 8

struct hp_rule_slot *hp_rule_cache;

/* Bumped by hp_cfi_code_unloaded: another object may now sit at the addresses of the code that
 * went away, so rules cached by address are emptied (each thread's at its next walk). */
uint32_t hp_code_gen;

int hp_cfi_init(void)
{
    if (!hp_rule_cache)
        hp_rule_cache = hp_meta_map(HP_RULE_SLOTS * sizeof *hp_rule_cache);
    return hp_rule_cache ? 0 : -1;
}

void hp_cfi_code_unloaded(void)
{
    /* Concurrent lookups see a rule or an empty slot, either of which is safe. */
    if (hp_rule_cache)
        for (uint32_t i = 0; i < HP_RULE_SLOTS; i++)
            __atomic_store_n(&hp_rule_cache[i].pc, 0, __ATOMIC_RELAXED);
    __atomic_add_fetch(&hp_code_gen, 1, __ATOMIC_RELEASE);
}

uint64_t hp_rule_slow(uint64_t pc, uint64_t h)
{
    for (unsigned i = 0; i < PROBES; i++) {
        struct hp_rule_slot *s = &hp_rule_cache[(h + i) & (HP_RULE_SLOTS - 1)];
        uint64_t k = __atomic_load_n(&s->pc, __ATOMIC_ACQUIRE);
        if (k == pc)
            return s->rule;
        if (k == (pc | HP_RULE_BUSY))
            break; /* another thread is decoding it right now */
        if (k == 0) {
            uint64_t zero = 0;
            if (!__atomic_compare_exchange_n(&s->pc, &zero, pc | HP_RULE_BUSY, 0, __ATOMIC_ACQUIRE,
                                             __ATOMIC_RELAXED))
                break;
            uint64_t r = hp_decode_rule(pc);
            s->rule = r;
            __atomic_store_n(&s->pc, pc, __ATOMIC_RELEASE);
            return r;
        }
    }
    return hp_decode_rule(pc);
}

HP_COLD uint64_t hp_thread_rule_miss(struct hp_walk_cache *wc, uint64_t ra, uint64_t i)
{
    uint64_t r = hp_shared_rule(ra);
    wc->rules[i].ra = ra;
    wc->rules[i].rule = r;
    return r;
}

#else

int hp_cfi_init(void) { return -1; }

#endif
