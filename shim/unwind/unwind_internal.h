/* shim/unwind's private declarations, shared by its files (unwind.h is the folder's API): the
 * stack hash, the cfi walk's rules and their caches, the executable ranges, the thread's stack
 * bounds and the frame-pointer walk, libunwind's state. Inline here: what the allocation path's
 * capture and walk call, which must stay inline there. */
#ifndef HP_UNWIND_INTERNAL_H
#define HP_UNWIND_INTERNAL_H

#include "unwind/unwind.h"
#include "rt/rt.h"

#include <stdint.h>

/* ---------- the stack hash ---------- */

/* The stack hash every unwinder uses: a polynomial in an odd constant K over the frames,
 * innermost frame the constant term, then a bijective mix. Chained from the outermost frame
 * inwards (c = pc + K * c_outer), so a stack that shares its outer frames with the previous one
 * is hashed from where they part; and the hash of the innermost L frames of a longer chain is
 * c[0] - K^L * c[L], so cutting a deep stack to the depth limit costs no rehash. */
#define HP_STACK_HASH_K 0x9e3779b97f4a7c15ull
static inline uint64_t hp_stack_hash_step(uint64_t c, uintptr_t pc) { return c * HP_STACK_HASH_K + pc; }
static inline uint64_t hp_stack_hash_final(uint64_t c)
{
    c ^= c >> 31;
    c *= 0xbf58476d1ce4e5b9ull;
    return c ^ (c >> 29);
}
static inline uint64_t hp_stack_hash(const uintptr_t *pcs, int n)
{
    uint64_t c = 0;
    for (int i = n - 1; i >= 0; i--)
        c = hp_stack_hash_step(c, pcs[i]);
    return hp_stack_hash_final(c);
}

/* ---------- the cfi walk (walk.c, sites.c, rules.c) ---------- */

/* A step that reads no return address names this slot, whose value (0) never changes. */
extern const uintptr_t hp_walk_no_slot;

int hp_cfi_init(void); /* 0, or -1 without memory for the rule cache */
/* Walk from a frame whose return address is ip, with the caller's stack pointer sp (the CFA
 * of the frame just left) and frame register bp. Stops at the first frame it cannot follow or
 * that leaves [sp, stack_hi), or after max frames (*truncated = 1). Returns the depth; *out
 * points at the frames, innermost first (into wc when given, else pcs, which has room for max),
 * and *hash is hp_stack_hash of them. */
int hp_cfi_walk(uintptr_t ip, uintptr_t sp, uintptr_t bp, uintptr_t stack_hi, uintptr_t *pcs, int max,
                int *truncated, struct hp_walk_cache *wc, const uintptr_t **out, uint64_t *hash);
/* The same without a walk cache (a signal handler's walk, hp_stack_capture_nested): into pcs. */
int hp_cfi_walk_plain(uintptr_t ip, uintptr_t sp, uintptr_t bp, uintptr_t stack_hi, uintptr_t *pcs,
                      int max, int *truncated, uint64_t *hash);
/* The context of the stack whose innermost frame has return address ip, stack pointer sp and
 * frame register bp, on the stack whose top is hi, if the thread's site cache knows it (and
 * *truncated: whether its walk was cut at the depth limit); else 0, and the walk that follows
 * (hp_cfi_walk from the same frame) may be added with hp_cfi_site_add. */
uint32_t hp_cfi_site_find(struct hp_walk_cache *wc, uintptr_t ip, uintptr_t sp, uintptr_t bp,
                          uintptr_t hi, int *truncated);
/* Is the site cache resting (its hit rate was low)? Then the caller walks without it. Call
 * before hp_cfi_site_find, which it counts for. (Nothing is pending here: every lookup that
 * missed is followed by hp_cfi_site_add or hp_cfi_site_done.) */
static inline int hp_cfi_site_skip(struct hp_walk_cache *wc)
{
    if (__builtin_expect(wc->sites.off != 0, 0)) {
        wc->sites.off--;
        return 1;
    }
    return 0;
}
/* Code was unloaded: rules cached for its addresses may not fit what is loaded there next.
 * Empties the shared rule cache now and each thread's cache at its next walk. */
void hp_cfi_code_unloaded(void);

#if defined(__x86_64__)

/* A decoded rule, packed in 64 bits so a cache slot is written with one store after its key.
 * The low byte holds flags, tested with one instruction each; bits 16..31 the rbp save offset
 * from the CFA (signed), bits 32..63 the CFA offset (signed). The return address is always at
 * CFA - 8 (where the call put it): rules that place it elsewhere are not followed. */
#define HP_R_VALID 0x01ull     /* unwindable (else: cannot unwind past here) */
#define HP_R_IN_OBJECT 0x02ull /* not unwindable, but the address is in a loaded object */
#define HP_R_CFA_RBP 0x04ull   /* the CFA is rbp-based (else rsp) */
#define HP_R_RBP_SAVED 0x08ull /* rbp saved at its offset (else unchanged) */
#define HP_R_FP 0x10ull        /* exactly the rule of code that keeps a frame pointer: CFA = rbp
                                * + 16, rbp saved at CFA - 16 */

/* ---------- the rule caches (rules.c) ---------- */

/* A slot being filled; user-space addresses never have this bit. */
#define HP_RULE_BUSY (1ull << 63)

/* The shared cache of decoded rules (rules.c): open addressing, keyed by pc. */
struct hp_rule_slot {
    uint64_t pc;
    uint64_t rule; /* 0 = known not unwindable */
};
#define HP_RULE_SLOTS (1u << 16) /* (pc * K) >> 48 indexes it directly */
extern struct hp_rule_slot *hp_rule_cache;
/* Bumped by hp_cfi_code_unloaded (rules.c): caches by address are emptied. */
extern uint32_t hp_code_gen;

HP_COLD uint64_t hp_rule_slow(uint64_t pc, uint64_t h);
uint64_t hp_decode_rule(uint64_t pc); /* eh_frame.c */

/* The common case, a hit in the first slot, inline; everything else out of line. */
static inline __attribute__((always_inline)) uint64_t hp_rule_for(uint64_t pc)
{
    uint64_t h = (pc * 0x9e3779b97f4a7c15ull) >> 48;
    const struct hp_rule_slot *s = &hp_rule_cache[h];
    if (HP_LIKELY(__atomic_load_n(&s->pc, __ATOMIC_ACQUIRE) == pc))
        return s->rule;
    return hp_rule_slow(pc, h);
}

/* The rule for the frame with return address ra (the code at ra - 1). Returns 0 for addresses
 * in no loaded object. No user-space code address has the top bit (the shared cache's
 * HP_RULE_BUSY mark): ra - 1 with it comes from the end of a stack (ra = 0) or from garbage. */
static inline uint64_t hp_shared_rule(uint64_t ra)
{
    return ((ra - 1) & HP_RULE_BUSY) ? 0 : hp_rule_for(ra - 1);
}

HP_COLD uint64_t hp_thread_rule_miss(struct hp_walk_cache *wc, uint64_t ra, uint64_t i);

/* The same through the thread's own cache, keyed by the return address itself. An empty slot
 * holds address 0 with rule 0, which is right for it. */
static inline __attribute__((always_inline)) uint64_t hp_thread_rule(struct hp_walk_cache *wc,
                                                                      uint64_t ra)
{
    uint64_t i = ra & (HP_WALK_RULES - 1);
    if (HP_LIKELY(wc->rules[i].ra == ra))
        return wc->rules[i].rule;
    return hp_thread_rule_miss(wc, ra, i);
}

/* One step out of the frame whose rule is r: sp and bp become the caller's stack pointer and
 * frame register, at where the caller's return address lies; goes to fail (a label) when the
 * frame cannot be left safely. hi16 is the stack's top less 16: every read stays inside
 * [sp, top), and the stack pointer strictly grows, so a walk always ends. A macro, not a
 * function returning 0 on failure: in the walk's loop that costs a test per frame. */
#define HP_WALK_STEP(r, sp, bp, hi16, at, fail)                                                    \
    do {                                                                                           \
        if (HP_LIKELY((r) & HP_R_FP)) {                                                            \
            /* The commonest rule, first: the next frame's addresses depend on rbp alone, and      \
             * the processor can run ahead of the rule lookups. */                                 \
            if ((bp) < (sp) || (bp) > (hi16))                                                      \
                goto fail;                                                                         \
            (at) = (bp) + 8;                                                                       \
            (sp) = (bp) + 16;                                                                      \
            (bp) = *(const uintptr_t *)(bp);                                                       \
        } else if (HP_LIKELY((r) & HP_R_VALID)) {                                                  \
            /* The return address at cfa - 8 in [sp, top - 8] puts the CFA in (sp, top]; the       \
             * rbp slot lies below the CFA (decode_in_object) and must not be below sp. */         \
            uintptr_t cfa_ = (((r) & HP_R_CFA_RBP) ? (bp) : (sp)) + (uintptr_t)((int64_t)(r) >> 32); \
            (at) = cfa_ - 8;                                                                       \
            if ((at) < (sp) || cfa_ - 16 > (hi16))                                                 \
                goto fail;                                                                         \
            if ((r) & HP_R_RBP_SAVED) {                                                            \
                uintptr_t bat_ = cfa_ + (uintptr_t)(intptr_t)(int16_t)((r) >> 16);                 \
                if (bat_ < (sp))                                                                   \
                    goto fail;                                                                     \
                (bp) = *(const uintptr_t *)bat_;                                                   \
            }                                                                                      \
            (sp) = cfa_;                                                                           \
        } else {                                                                                   \
            /* No call frame information (JIT code, hand-written assembly): such code usually      \
             * keeps frame pointers, so try one frame-pointer step, checked like the rest. rbp     \
             * may equal sp: a frame without locals calls with rsp where rbp points. */            \
            if ((bp) < (sp) || (bp) > (hi16) || ((bp) & 7))                                        \
                goto fail;                                                                         \
            (at) = (bp) + 8;                                                                       \
            (sp) = (bp) + 16;                                                                      \
            (bp) = *(const uintptr_t *)(bp);                                                       \
        }                                                                                          \
    } while (0)

void hp_sites_clear(struct hp_site_cache *sc); /* sites.c */

#endif /* __x86_64__ */

/* ---------- executable ranges (ranges.c) ---------- */

/* The shim's own code, found when the maps are read: the walks leave its frames out. */
extern uintptr_t hp_shim_lo, hp_shim_hi;
static inline int hp_in_shim(uintptr_t pc) { return pc >= hp_shim_lo && pc < hp_shim_hi; }
int hp_exec_range(uintptr_t pc, uintptr_t *lo, uintptr_t *hi);
int hp_is_exec(uintptr_t pc); /* in an executable mapping or a loaded object */
void hp_exec_ranges_fork_child(void);

/* ---------- the thread's stack and the frame-pointer walk (fp.c) ---------- */

void hp_main_stack_init(void); /* the main thread's stack size limit */
void hp_own_stack_compute(uintptr_t *lo, uintptr_t *hi);

/* This thread's own stack, [lo, hi): computed once per thread. */
static inline void hp_own_stack(uintptr_t *lo, uintptr_t *hi)
{
    if (HP_LIKELY(hp_tls.stack_hi)) {
        *lo = hp_tls.stack_lo;
        *hi = hp_tls.stack_hi;
        return;
    }
    hp_own_stack_compute(lo, hi);
}

/* Upper bound for reads during a walk starting at sp: the thread's stack top when sp is on the
 * thread's own stack (all of it above sp is mapped). Otherwise (an alternate signal stack, a
 * coroutine's stack) as much above sp as mincore says is mapped, up to 256 KiB. */
uintptr_t hp_walk_limit_other(uintptr_t sp);

static inline uintptr_t hp_walk_limit(uintptr_t sp)
{
    uintptr_t lo, hi;
    hp_own_stack(&lo, &hi);
    if (HP_LIKELY(sp >= lo && sp < hi))
        return hi;
    return hp_walk_limit_other(sp);
}

/* Walk the shim's own frames (built with frame pointers) from fp to the first frame outside
 * it: its return address, and the stack pointer and frame register of the frame it returns to;
 * hi: the walk's upper bound. 0 if there is none. */
static inline int hp_leave_shim(uintptr_t fp, uintptr_t *ret, uintptr_t *sp, uintptr_t *bp,
                                uintptr_t *hi)
{
    uintptr_t lo = fp;
    *hi = hp_walk_limit(fp);
    while (fp >= lo && fp < *hi && *hi - fp >= 2 * sizeof(uintptr_t) && !(fp & (sizeof(uintptr_t) - 1))) {
        uintptr_t next = ((uintptr_t *)fp)[0];
        *ret = ((uintptr_t *)fp)[1];
        if (!hp_in_shim(*ret)) { /* the walk checks that ret is code */
            *sp = fp + 2 * sizeof(uintptr_t);
            *bp = next;
            return 1;
        }
        if (next <= fp)
            break;
        fp = next;
    }
    return 0;
}

int hp_capture_fp(uintptr_t *pcs, int max, int *truncated, uintptr_t fp);

/* ---------- libunwind (libunwind.c) ---------- */

extern int (*hp_unw_backtrace_fn)(void **, int); /* unw_backtrace, once loaded */
/* unwinder=libunwind while libc is not initialised yet (the shim's constructor runs before
 * libc's): dlopen would run libc's initialiser without the program's arguments. The library is
 * loaded by the first stack capture after libc's initialiser (hp_stack_libc_ready), unless the
 * dynamic loader itself is allocating (it may be in the middle of changing its lists) or the
 * thread's stack is small; until then frame pointers stand in, as they do for allocations made
 * before the shim's constructor. hp_unw_deferred: HP_UNW_DEFERRED until a thread takes the
 * load, HP_UNW_LOADING while it loads, then 0. */
enum { HP_UNW_DEFERRED = 1, HP_UNW_LOADING = 2 };
extern int hp_unw_deferred;
int hp_capture_unwind_guarded(uintptr_t *pcs, int max, int *truncated, uintptr_t frame);
HP_COLD void hp_wait_libunwind_load(void);
HP_COLD void hp_try_deferred_libunwind(uintptr_t caller);
void hp_unw_fork_child(void);

/* ---------- the capture (capture.c) ---------- */

extern int hp_use_cfi; /* unwinder=cfi, or libunwind given way to it (hp_stack_before_sandbox) */

#endif
