/* The cfi unwinder: walks stacks of code built without frame pointers using the DWARF call
 * frame information every x86_64 object carries in .eh_frame, the way debuggers do, but with
 * each return address's rule (where the CFA, the return address and the saved rbp are) decoded
 * once and kept in a lock-free cache, so a walk costs a few loads per frame. Objects are found
 * with glibc's _dl_find_object, which takes no lock and sees every dlopen at once. */
#include "unwind/unwind.h"
#include "rt/rt.h"

#include <dlfcn.h>
#include <stdint.h>
#include <string.h>

#if defined(__x86_64__)

/* DWARF register numbers on x86_64. */
enum { REG_RBP = 6, REG_RSP = 7, REG_RA = 16 };

/* A decoded rule, packed in 64 bits so a cache slot is written with one store after its key.
 * The low byte holds flags, tested with one instruction each; bits 16..31 the rbp save offset
 * from the CFA (signed), bits 32..63 the CFA offset (signed). The return address is always at
 * CFA - 8 (where the call put it): rules that place it elsewhere are not followed. */
#define R_VALID 0x01ull     /* unwindable (else: cannot unwind past here) */
#define R_IN_OBJECT 0x02ull /* not unwindable, but the address is in a loaded object */
#define R_CFA_RBP 0x04ull   /* the CFA is rbp-based (else rsp) */
#define R_RBP_SAVED 0x08ull /* rbp saved at its offset (else unchanged) */
#define R_FP 0x10ull        /* exactly the rule of code that keeps a frame pointer: CFA = rbp + 16,
                             * rbp saved at CFA - 16 */

static inline uint64_t rule_pack(int32_t cfa_off, int cfa_rbp, int rbp_saved, int32_t rbp_off)
{
    uint64_t r = ((uint64_t)(uint32_t)cfa_off << 32) | R_VALID;
    if (cfa_rbp)
        r |= R_CFA_RBP;
    if (rbp_saved)
        r |= R_RBP_SAVED | ((uint64_t)(uint16_t)(int16_t)rbp_off << 16);
    if (cfa_rbp && cfa_off == 16 && rbp_saved && rbp_off == -16)
        r |= R_FP;
    return r;
}

/* ---------- reading .eh_frame ---------- */

struct cursor {
    const uint8_t *p, *end;
    int bad;
};

static uint64_t uleb(struct cursor *c)
{
    uint64_t v = 0;
    unsigned shift = 0;
    while (c->p < c->end) {
        uint8_t b = *c->p++;
        if (shift < 64)
            v |= (uint64_t)(b & 0x7f) << shift;
        shift += 7;
        if (!(b & 0x80))
            return v;
    }
    c->bad = 1;
    return 0;
}

static int64_t sleb(struct cursor *c)
{
    int64_t v = 0;
    unsigned shift = 0;
    uint8_t b = 0;
    while (c->p < c->end) {
        b = *c->p++;
        if (shift < 64)
            v |= (int64_t)((uint64_t)(b & 0x7f) << shift);
        shift += 7;
        if (!(b & 0x80)) {
            if (shift < 64 && (b & 0x40))
                v |= -((int64_t)1 << shift);
            return v;
        }
    }
    c->bad = 1;
    return 0;
}

static uint64_t fixed(struct cursor *c, unsigned n)
{
    if ((size_t)(c->end - c->p) < n) {
        c->bad = 1;
        return 0;
    }
    uint64_t v = 0;
    hp_memcpy(&v, c->p, n); /* little-endian */
    c->p += n;
    return v;
}

/* A pointer in DW_EH_PE encoding `enc`; `datarel` is the base for DW_EH_PE_datarel. */
static uint64_t encoded(struct cursor *c, uint8_t enc, uint64_t datarel)
{
    if (enc == 0xff)
        return 0;
    uint64_t base = 0;
    const uint8_t *at = c->p;
    switch (enc & 0x70) {
    case 0x00: break;
    case 0x10: base = (uint64_t)(uintptr_t)at; break; /* pcrel */
    case 0x30: base = datarel; break;                  /* datarel */
    default: c->bad = 1; return 0;
    }
    uint64_t v;
    switch (enc & 0x0f) {
    case 0x00: v = fixed(c, 8); break;
    case 0x01: v = uleb(c); break;
    case 0x02: v = fixed(c, 2); break;
    case 0x03: v = fixed(c, 4); break;
    case 0x04: v = fixed(c, 8); break;
    case 0x09: v = (uint64_t)sleb(c); break;
    case 0x0a: v = (uint64_t)(int64_t)(int16_t)fixed(c, 2); break;
    case 0x0b: v = (uint64_t)(int64_t)(int32_t)fixed(c, 4); break;
    case 0x0c: v = fixed(c, 8); break;
    default: c->bad = 1; return 0;
    }
    if (enc & 0x80) { /* indirect: not used for code addresses */
        c->bad = 1;
        return 0;
    }
    return base + v;
}

/* Find the FDE covering pc through the binary-search table of .eh_frame_hdr. */
static const uint8_t *find_fde(const uint8_t *hdr, uint64_t pc)
{
    struct cursor c = {hdr, hdr + 4 + 16, 0};
    if (hdr[0] != 1)
        return NULL;
    uint8_t ptr_enc = hdr[1], count_enc = hdr[2], table_enc = hdr[3];
    c.p = hdr + 4;
    c.end = hdr + 64;
    encoded(&c, ptr_enc, (uint64_t)(uintptr_t)hdr);
    uint64_t count = encoded(&c, count_enc, (uint64_t)(uintptr_t)hdr);
    if (c.bad || table_enc != 0x3b || count == 0) /* datarel sdata4: what every linker writes */
        return NULL;
    const int32_t *table = (const int32_t *)c.p;
    uint64_t lo = 0, hi = count;
    while (hi - lo > 1) {
        uint64_t mid = (lo + hi) / 2;
        if ((uint64_t)(uintptr_t)hdr + (int64_t)table[2 * mid] <= pc)
            lo = mid;
        else
            hi = mid;
    }
    if ((uint64_t)(uintptr_t)hdr + (int64_t)table[2 * lo] > pc)
        return NULL;
    return hdr + (int64_t)table[2 * lo + 1];
}

struct state {
    int cfa_reg;
    int64_t cfa_off;
    int rbp_saved, ra_saved;
    int64_t rbp_off, ra_off;
};

struct cie_info {
    uint64_t code_align;
    int64_t data_align;
    uint64_t ra_reg;
    uint8_t fde_enc;
    int has_z;
    const uint8_t *insns, *insns_end;
};

static int parse_cie(const uint8_t *cie, struct cie_info *ci)
{
    uint32_t len32;
    hp_memcpy(&len32, cie, 4);
    if (len32 == 0 || len32 == 0xffffffffu)
        return -1;
    struct cursor c = {cie + 4, cie + 4 + len32, 0};
    if (fixed(&c, 4) != 0) /* CIE id */
        return -1;
    uint64_t version = fixed(&c, 1);
    const char *aug = (const char *)c.p;
    while (c.p < c.end && *c.p)
        c.p++;
    c.p++;
    if (aug[0] && aug[0] != 'z')
        return -1; /* pre-'z' augmentations ("eh") are not in use */
    ci->code_align = uleb(&c);
    ci->data_align = sleb(&c);
    ci->ra_reg = version == 1 ? fixed(&c, 1) : uleb(&c);
    ci->fde_enc = 0;
    ci->has_z = aug[0] == 'z';
    if (ci->has_z) {
        uint64_t alen = uleb(&c);
        const uint8_t *aend = c.p + alen;
        for (const char *a = aug + 1; *a && !c.bad; a++) {
            if (*a == 'R')
                ci->fde_enc = (uint8_t)fixed(&c, 1);
            else if (*a == 'L')
                fixed(&c, 1);
            else if (*a == 'P') {
                uint8_t penc = (uint8_t)fixed(&c, 1);
                encoded(&c, penc & 0x7f, 0);
            } else if (*a == 'S')
                return -1; /* a signal frame: its registers live in the signal context */
            else
                break;
        }
        c.p = aend;
    }
    if (c.bad || c.p > c.end)
        return -1;
    ci->insns = c.p;
    ci->insns_end = c.end;
    return 0;
}

/* Run CFA instructions until the location passes target. Returns 0, or -1 on an instruction
 * this unwinder does not follow (expressions, registers saved in registers). */
static int run_cfa(const uint8_t *p, const uint8_t *end, const struct cie_info *ci, uint64_t loc,
                   uint64_t target, struct state *st, const struct state *initial)
{
    struct state stack[8];
    int depth = 0;
    struct cursor c = {p, end, 0};
    while (c.p < c.end && !c.bad) {
        uint8_t op = *c.p++;
        uint8_t hi2 = op & 0xc0, low = op & 0x3f;
        if (hi2 == 0x40) { /* advance_loc */
            loc += low * ci->code_align;
            if (loc > target)
                return 0;
            continue;
        }
        if (hi2 == 0x80) { /* offset */
            int64_t off = (int64_t)uleb(&c) * ci->data_align;
            if (low == REG_RBP)
                st->rbp_saved = 1, st->rbp_off = off;
            else if (low == ci->ra_reg)
                st->ra_saved = 1, st->ra_off = off;
            continue;
        }
        if (hi2 == 0xc0) { /* restore */
            if (low == REG_RBP && initial)
                st->rbp_saved = initial->rbp_saved, st->rbp_off = initial->rbp_off;
            continue;
        }
        switch (op) {
        case 0x00: break; /* nop */
        case 0x01: loc = encoded(&c, ci->fde_enc, 0); if (loc > target) return 0; break;
        case 0x02: loc += fixed(&c, 1) * ci->code_align; if (loc > target) return 0; break;
        case 0x03: loc += fixed(&c, 2) * ci->code_align; if (loc > target) return 0; break;
        case 0x04: loc += fixed(&c, 4) * ci->code_align; if (loc > target) return 0; break;
        case 0x05: case 0x11: { /* offset_extended(_sf) */
            uint64_t reg = uleb(&c);
            int64_t off = (op == 0x05 ? (int64_t)uleb(&c) : sleb(&c)) * ci->data_align;
            if (reg == REG_RBP)
                st->rbp_saved = 1, st->rbp_off = off;
            else if (reg == ci->ra_reg)
                st->ra_saved = 1, st->ra_off = off;
            break;
        }
        case 0x06: { /* restore_extended */
            uint64_t reg = uleb(&c);
            if (reg == REG_RBP && initial)
                st->rbp_saved = initial->rbp_saved, st->rbp_off = initial->rbp_off;
            break;
        }
        case 0x07: case 0x08: { /* undefined, same_value */
            uint64_t reg = uleb(&c);
            if (reg == REG_RBP)
                st->rbp_saved = 0;
            else if (reg == ci->ra_reg)
                return -1;
            break;
        }
        case 0x09: { /* register: a register saved in another one */
            uint64_t reg = uleb(&c);
            uleb(&c);
            if (reg == REG_RBP || reg == ci->ra_reg)
                return -1;
            break;
        }
        case 0x0a: /* remember_state */
            if (depth == 8)
                return -1;
            stack[depth++] = *st;
            break;
        case 0x0b: /* restore_state */
            if (depth == 0)
                return -1;
            *st = stack[--depth];
            break;
        case 0x0c: st->cfa_reg = (int)uleb(&c); st->cfa_off = (int64_t)uleb(&c); break;
        case 0x0d: st->cfa_reg = (int)uleb(&c); break;
        case 0x0e: st->cfa_off = (int64_t)uleb(&c); break;
        case 0x12: st->cfa_reg = (int)uleb(&c); st->cfa_off = sleb(&c) * ci->data_align; break;
        case 0x13: st->cfa_off = sleb(&c) * ci->data_align; break;
        case 0x0f: /* def_cfa_expression (PLT stubs, signal trampolines) */
            return -1;
        case 0x10: case 0x16: { /* expression, val_expression */
            uint64_t reg = uleb(&c);
            uint64_t len = uleb(&c);
            c.p += len;
            if (reg == REG_RBP || reg == ci->ra_reg)
                return -1;
            break;
        }
        case 0x14: case 0x15: { /* val_offset(_sf) */
            uint64_t reg = uleb(&c);
            if (op == 0x14)
                uleb(&c);
            else
                sleb(&c);
            if (reg == REG_RBP || reg == ci->ra_reg)
                return -1;
            break;
        }
        case 0x2e: uleb(&c); break; /* GNU_args_size */
        case 0x2f: { /* GNU_negative_offset_extended */
            uint64_t reg = uleb(&c);
            int64_t off = -(int64_t)uleb(&c) * ci->data_align;
            if (reg == REG_RBP)
                st->rbp_saved = 1, st->rbp_off = off;
            else if (reg == ci->ra_reg)
                st->ra_saved = 1, st->ra_off = off;
            break;
        }
        default:
            return -1;
        }
    }
    return c.bad ? -1 : 0;
}

static uint64_t decode_in_object(const struct dl_find_object *fo, uint64_t pc);

/* Decode the rule for code address pc (a return address minus one): 0 when pc is in no loaded
 * object, R_IN_OBJECT when it is but cannot be unwound through. */
static uint64_t decode_rule(uint64_t pc)
{
    struct dl_find_object fo;
    if (_dl_find_object((void *)(uintptr_t)pc, &fo) != 0)
        return 0;
    if (!fo.dlfo_eh_frame)
        return R_IN_OBJECT;
    uint64_t r = decode_in_object(&fo, pc);
    return r ? r : R_IN_OBJECT;
}

static uint64_t decode_in_object(const struct dl_find_object *fo, uint64_t pc)
{
    const uint8_t *fde = find_fde(fo->dlfo_eh_frame, pc);
    if (!fde)
        return 0;
    uint32_t len32, cie_off;
    hp_memcpy(&len32, fde, 4);
    if (len32 == 0 || len32 == 0xffffffffu)
        return 0;
    hp_memcpy(&cie_off, fde + 4, 4);
    if (cie_off == 0)
        return 0; /* that is a CIE */
    struct cie_info ci;
    if (parse_cie(fde + 4 - cie_off, &ci) != 0)
        return 0;
    struct cursor c = {fde + 8, fde + 4 + len32, 0};
    uint64_t start = encoded(&c, ci.fde_enc, 0);
    uint64_t range = encoded(&c, ci.fde_enc & 0x0f, 0);
    if (c.bad || pc < start || pc >= start + range)
        return 0;
    if (ci.has_z) {
        uint64_t alen = uleb(&c);
        c.p += alen;
    }
    struct state st = {REG_RSP, 8, 0, 0, 0, 0};
    if (run_cfa(ci.insns, ci.insns_end, &ci, start, pc, &st, NULL) != 0)
        return 0;
    struct state initial = st;
    if (run_cfa(c.p, c.end, &ci, start, pc, &st, &initial) != 0)
        return 0;
    if ((st.cfa_reg != REG_RSP && st.cfa_reg != REG_RBP) || !st.ra_saved)
        return 0;
    /* Saved registers lie below the CFA (the stack pointer before the call): a slot at or
     * above it is not something the step below handles (it checks only that slots are above
     * the stack pointer, the CFA being within the stack). */
    if (st.cfa_off < INT32_MIN || st.cfa_off > INT32_MAX || st.ra_off != -8 ||
        (st.rbp_saved && (st.rbp_off < INT16_MIN || st.rbp_off > -8)))
        return 0;
    return rule_pack((int32_t)st.cfa_off, st.cfa_reg == REG_RBP, st.rbp_saved, (int32_t)st.rbp_off);
}

/* ---------- the rule cache ---------- */

/* Open addressing, keyed by pc; a slot's rule is stored before its key is published. A full
 * neighbourhood just means decoding again; entries are never removed (code unloaded by dlclose
 * leaves stale rules for addresses that no return address points to any more). */
#define CACHE_SLOTS (1u << 16) /* (pc * K) >> 48 indexes it directly */
#define PROBES 8

struct slot {
    uint64_t pc;
    uint64_t rule; /* 0 = known not unwindable */
};

static struct slot *cache;

/* Bumped by hp_cfi_code_unloaded: another object may now sit at the addresses of the code that
 * went away, so rules cached by address are emptied. */
static uint32_t code_gen;

int hp_cfi_init(void)
{
    if (!cache)
        cache = hp_meta_map(CACHE_SLOTS * sizeof *cache);
    return cache ? 0 : -1;
}

void hp_cfi_code_unloaded(void)
{
    /* Concurrent lookups see a rule or an empty slot, either of which is safe. */
    if (cache)
        for (uint32_t i = 0; i < CACHE_SLOTS; i++)
            __atomic_store_n(&cache[i].pc, 0, __ATOMIC_RELAXED);
    __atomic_add_fetch(&code_gen, 1, __ATOMIC_RELEASE);
}

#define BUSY (1ull << 63) /* a slot being filled; user-space addresses never have this bit */

static HP_COLD uint64_t rule_slow(uint64_t pc, uint64_t h);

/* The common case, a hit in the first slot, inline; everything else out of line. */
static inline __attribute__((always_inline)) uint64_t rule_for(uint64_t pc)
{
    uint64_t h = (pc * 0x9e3779b97f4a7c15ull) >> 48;
    const struct slot *s = &cache[h];
    if (HP_LIKELY(__atomic_load_n(&s->pc, __ATOMIC_ACQUIRE) == pc))
        return s->rule;
    return rule_slow(pc, h);
}

static uint64_t rule_slow(uint64_t pc, uint64_t h)
{
    for (unsigned i = 0; i < PROBES; i++) {
        struct slot *s = &cache[(h + i) & (CACHE_SLOTS - 1)];
        uint64_t k = __atomic_load_n(&s->pc, __ATOMIC_ACQUIRE);
        if (k == pc)
            return s->rule;
        if (k == (pc | BUSY))
            break; /* another thread is decoding it right now */
        if (k == 0) {
            uint64_t zero = 0;
            if (!__atomic_compare_exchange_n(&s->pc, &zero, pc | BUSY, 0, __ATOMIC_ACQUIRE,
                                             __ATOMIC_RELAXED))
                break;
            uint64_t r = decode_rule(pc);
            s->rule = r;
            __atomic_store_n(&s->pc, pc, __ATOMIC_RELEASE);
            return r;
        }
    }
    return decode_rule(pc);
}

/* One step out of the frame whose rule is r: sp and bp become the caller's stack pointer and
 * frame register, at where the caller's return address lies; goes to fail (a label) when the
 * frame cannot be left safely. hi16 is the stack's top less 16: every read stays inside
 * [sp, top), and the stack pointer strictly grows, so a walk always ends. A macro, not a
 * function returning 0 on failure: in the walk's loop that costs a test per frame. */
#define WALK_STEP(r, sp, bp, hi16, at, fail)                                                      \
    do {                                                                                          \
        if (HP_LIKELY((r) & R_FP)) {                                                              \
            /* The commonest rule, first: the next frame's addresses depend on rbp alone, and \
             * the processor can run ahead of the rule lookups. */                                \
            if ((bp) < (sp) || (bp) > (hi16))                                                     \
                goto fail;                                                                        \
            (at) = (bp) + 8;                                                                      \
            (sp) = (bp) + 16;                                                                     \
            (bp) = *(const uintptr_t *)(bp);                                                      \
        } else if (HP_LIKELY((r) & R_VALID)) {                                                    \
            /* The return address at cfa - 8 in [sp, top - 8] puts the CFA in (sp, top]; the   \
             * rbp slot lies below the CFA (decode_in_object) and must not be below sp. */      \
            uintptr_t cfa_ = (((r) & R_CFA_RBP) ? (bp) : (sp)) + (uintptr_t)((int64_t)(r) >> 32); \
            (at) = cfa_ - 8;                                                                      \
            if ((at) < (sp) || cfa_ - 16 > (hi16))                                                \
                goto fail;                                                                        \
            if ((r) & R_RBP_SAVED) {                                                              \
                uintptr_t bat_ = cfa_ + (uintptr_t)(intptr_t)(int16_t)((r) >> 16);               \
                if (bat_ < (sp))                                                                  \
                    goto fail;                                                                    \
                (bp) = *(const uintptr_t *)bat_;                                                  \
            }                                                                                     \
            (sp) = cfa_;                                                                          \
        } else {                                                                                  \
            /* No call frame information (JIT code, hand-written assembly): such code usually  \
             * keeps frame pointers, so try one frame-pointer step, checked like the rest. rbp  \
             * may equal sp: a frame without locals calls with rsp where rbp points. */          \
            if ((bp) < (sp) || (bp) > (hi16) || ((bp) & 7))                                       \
                goto fail;                                                                        \
            (at) = (bp) + 8;                                                                      \
            (sp) = (bp) + 16;                                                                     \
            (bp) = *(const uintptr_t *)(bp);                                                      \
        }                                                                                         \
    } while (0)

/* The rule for the frame with return address ra (the code at ra - 1). Returns 0 for addresses
 * in no loaded object. No user-space code address has the top bit (the shared cache's BUSY
 * mark): ra - 1 with it comes from the end of a stack (ra = 0) or from garbage. */
static inline uint64_t shared_rule(uint64_t ra)
{
    return ((ra - 1) & BUSY) ? 0 : rule_for(ra - 1);
}

static HP_COLD uint64_t thread_rule_miss(struct hp_walk_cache *wc, uint64_t ra, uint64_t i)
{
    uint64_t r = shared_rule(ra);
    wc->rules[i].ra = ra;
    wc->rules[i].rule = r;
    return r;
}

/* The same through the thread's own cache, keyed by the return address itself. An empty slot
 * holds address 0 with rule 0, which is right for it. */
static inline __attribute__((always_inline)) uint64_t thread_rule(struct hp_walk_cache *wc, uint64_t ra)
{
    uint64_t i = ra & (HP_WALK_RULES - 1);
    if (HP_LIKELY(wc->rules[i].ra == ra))
        return wc->rules[i].rule;
    return thread_rule_miss(wc, ra, i);
}

/* Is ra in an executable mapping (JIT code)? Code made since the table of mappings was last read
 * counts once it is read again (at most once a second). */
static int in_exec_mapping(uintptr_t ra)
{
    if (hp_is_exec_mapping(ra))
        return 1;
    hp_maps_refresh(0);
    return hp_is_exec_mapping(ra);
}

/* Does a frame whose return address is ra, with rule r, count? Only if the address is code: it
 * has call frame information or lies in a loaded object (found through the loader's own list,
 * so objects loaded a moment ago count), or in an executable mapping. */
static inline int is_code(uint64_t r, uintptr_t ra)
{
    return (r & (R_VALID | R_IN_OBJECT)) || in_exec_mapping(ra);
}

const uintptr_t hp_walk_no_slot = 0;

/* A walk without a thread cache: straight into pcs, each rule from the shared cache, the last
 * two remembered (recursion and loops repeat return addresses). */
static int walk_plain(uintptr_t ip, uintptr_t sp, uintptr_t bp, uintptr_t hi16, uintptr_t *pcs,
                      int max, int *truncated, uint64_t r)
{
    uintptr_t memo_ra[2] = {ip, 0};
    uint64_t memo_r[2] = {r, 0};
    int n = 0;
    for (;;) {
        if (n == max) {
            *truncated = 1;
            break;
        }
        pcs[n++] = ip;
        uintptr_t at;
        WALK_STEP(r, sp, bp, hi16, at, out);
        ip = *(const uintptr_t *)at;
        if (ip == memo_ra[0]) {
            r = memo_r[0];
        } else if (ip == memo_ra[1]) {
            r = memo_r[1];
        } else {
            r = ip > 4096 ? shared_rule(ip) : 0;
            memo_ra[1] = memo_ra[0];
            memo_r[1] = memo_r[0];
            memo_ra[0] = ip;
            memo_r[0] = r;
        }
        if (!is_code(r, ip))
            break;
    }
out:
    return n;
}

void hp_walk_cache_reset(struct hp_walk_cache *wc)
{
    for (int i = HP_WALK_MAX; i < HP_WALK_MAX + 3; i++) {
        wc->slot[i] = (uintptr_t)&hp_walk_no_slot;
        wc->ip[i + 1] = 0;
    }
    wc->base = HP_WALK_MAX;
    wc->hash[HP_WALK_MAX] = 0; /* the chain of no frames */
    wc->sp[HP_WALK_MAX] = UINTPTR_MAX; /* ends every search by stack pointer */
}

/* Do frames k.. of the previous walk still describe the stack, as far as frame lim? Each
 * frame's return-address slot must still hold the next frame's address (ip[HP_WALK_MAX]: the
 * value the last step read). Slots k .. lim - 1 are checked.
 *
 * The slots of saved frame registers need no check: with the same return addresses at the
 * same stack pointers, every frame outside k is the same activation or one at the very same
 * place, and a frame register that a rule reads is the frame base such an activation set up. */
static inline uintptr_t slot_differs(const struct hp_walk_cache *wc, long k)
{
    return *(const uintptr_t *)wc->slot[k] ^ wc->ip[k + 1];
}

static inline int suffix_holds(const struct hp_walk_cache *wc, long k, long lim)
{
    /* Nearly always every slot holds, so no test per slot: four slots per step (k < lim). The
     * last step may read up to three slots past lim: past the end they are padding that always
     * holds; before it, slots of frames further out, on the walked stack (as safe to read as
     * the others), which at worst make a join that would have held fail, and the walk go on. */
    uintptr_t d = 0;
    do {
        d |= slot_differs(wc, k) | slot_differs(wc, k + 1) | slot_differs(wc, k + 2) | slot_differs(wc, k + 3);
        k += 4;
    } while (k < lim);
    return d == 0;
}

/* K to the power e (mod 2^64), for the hash of the innermost frames of a deeper walk. */
static uint64_t hash_pow(unsigned e)
{
    uint64_t r = 1, b = HP_STACK_HASH_K;
    for (; e; e >>= 1, b *= b)
        if (e & 1)
            r *= b;
    return r;
}

/* The new frames are too many to sit in front of the reused ones (over HP_WALK_MAX in all):
 * hand out the innermost max frames (in wc->pcs) and start afresh next time. */
static HP_COLD int walk_too_deep(struct hp_walk_cache *wc, int m, int reuse, int trunc)
{
    const int END = HP_WALK_MAX;
    uintptr_t *pcs = wc->pcs;
    int n = 0, max = wc->max;
    for (int k = 0; k < m && n < max; k++)
        pcs[n++] = wc->nf_ip[k];
    for (int k = reuse; k < END && n < max; k++)
        pcs[n++] = wc->ip[k];
    wc->res_out = pcs;
    wc->res_trunc = trunc || m + (END - reuse) > max;
    wc->res_hash = hp_stack_hash(pcs, n);
    hp_walk_cache_reset(wc);
    return n;
}

static void sites_clear(struct hp_site_cache *sc);

/* The thread's rules and previous walk date from before code was unloaded. */
static HP_COLD void walk_cache_new_code(struct hp_walk_cache *wc, uint32_t gen)
{
    hp_memset(wc->rules, 0, sizeof wc->rules);
    wc->first_ip = 0;
    wc->first_rule = 0;
    hp_walk_cache_reset(wc);
    sites_clear(&wc->sites);
    wc->gen = gen;
}

/* gcc can build one function without a frame pointer (one more register); clang has no such
 * attribute and gets by with the registers it has. */
#if defined(__GNUC__) && !defined(__clang__)
#define WALK_NO_FRAME_POINTER __attribute__((optimize("omit-frame-pointer")))
#else
#define WALK_NO_FRAME_POINTER
#endif

enum {
    WS_RUN,           /* go on from the frame at ip */
    WS_MISS,          /* stopped: the rule for ip is not in the thread's cache */
    WS_NOT_DESCRIBED, /* stopped: ip has no call frame information (r lacks R_VALID) */
    WS_NOT_CODE,      /* ip is not code: end the walk before it */
};

/* Walk on from wc->st until the walk joins the previous one, reaches the depth limit, cannot
 * step, or meets an address that is not code; put the new frames in place and return how many
 * frames the walk has (the results in wc->res_*). Returns -1 instead when the next frame's
 * address needs more than the thread's rule cache (st->why says what); the caller finds out
 * and runs this again. It calls nothing on the way, so the walk's state stays in registers,
 * and (built by gcc) has no frame pointer of its own, for one more. */
static __attribute__((noinline)) HP_HOT WALK_NO_FRAME_POINTER int walk_run(struct hp_walk_cache *wc)
{
    /* The state is in wc, not in a register of its own; so is frame j's stack pointer: the
     * loop needs every register it can get. */
    struct hp_walk_state *st = &wc->st;
    const long END = HP_WALK_MAX, max = wc->max;
    const uintptr_t hi16 = wc->hi16;
    uintptr_t ip = st->ip, sp = st->sp, bp = st->bp, at, last_read = 0;
    uint64_t r = st->r;
    long m = st->m, j = st->j, reuse = END; /* reuse: where the previous walk is joined */
    int trunc = 0;
    if (HP_UNLIKELY(st->why == WS_NOT_CODE)) {
        last_read = ip;
        goto done;
    }
    for (;;) {
        if (HP_UNLIKELY(sp >= wc->sp[j])) {
            while (wc->sp[j] < sp)
                j++;
            /* A previous walk cut at the depth limit lacks its outer frames: joining it is
             * right only if it still gives as many frames as a walk from here would take.
             * Only the slots up to the frame after the max-th are read: frames further out
             * are not handed out (and are checked again by a walk that needs them). */
            if (wc->sp[j] == sp && wc->ip[j] == ip && wc->bp[j] == bp &&
                (!wc->truncated || m + (END - j) >= max) &&
                suffix_holds(wc, j, j - m + max < END ? j - m + max : END)) {
                reuse = j;
                trunc = wc->truncated;
                goto done;
            }
        }
        if (m == max) {
            /* Nothing read: the next walk joining here stops here too. */
            wc->nf_slot[m - 1] = (uintptr_t)&hp_walk_no_slot;
            trunc = 1;
            goto done;
        }
        wc->nf_ip[m] = ip;
        wc->nf_sp[m] = sp;
        wc->nf_bp[m] = bp;
        WALK_STEP(r, sp, bp, hi16, at, no_step);
        wc->nf_slot[m++] = at;
        ip = *(const uintptr_t *)at;
        uint64_t i = ip & (HP_WALK_RULES - 1);
        if (HP_UNLIKELY(wc->rules[i].ra != ip)) {
            st->why = WS_MISS;
            goto suspend;
        }
        r = wc->rules[i].rule;
        if (HP_UNLIKELY(!(r & (R_VALID | R_IN_OBJECT)))) {
            st->why = WS_NOT_DESCRIBED;
            goto suspend;
        }
    }
no_step:
    wc->nf_slot[m++] = (uintptr_t)&hp_walk_no_slot;
done:
    if (HP_UNLIKELY(m > reuse))
        return walk_too_deep(wc, (int)m, (int)reuse, trunc);
    /* The new frames go right below the joined ones (or at the top end), and their chain
     * values are computed from the outside in. */
    long base = reuse - m;
    if (reuse == END)
        wc->ip[END] = last_read;
    uint64_t h = wc->hash[reuse];
    for (long k = m - 1; k >= 0; k--) {
        long x = base + k;
        uintptr_t fip = wc->nf_ip[k];
        wc->ip[x] = fip;
        wc->slot[x] = wc->nf_slot[k];
        wc->sp[x] = wc->nf_sp[k];
        wc->bp[x] = wc->nf_bp[k];
        h = hp_stack_hash_step(h, fip);
        wc->hash[x] = h;
    }
    wc->base = (int)base;
    wc->truncated = trunc;
    wc->stack_hi = hi16 + 16;
    long n = END - base;
    wc->res_out = &wc->ip[base];
    if (n > max) {
        /* The innermost max frames: their chain value without the frames outside them. */
        n = max;
        trunc = 1;
        h -= hash_pow((unsigned)max) * wc->hash[base + max];
    }
    wc->res_hash = hp_stack_hash_final(h);
    wc->res_trunc = trunc;
    return (int)n;
suspend:
    st->ip = ip;
    st->sp = sp;
    st->bp = bp;
    st->m = m;
    st->j = j;
    return -1;
}

int hp_cfi_walk_plain(uintptr_t ip, uintptr_t sp, uintptr_t bp, uintptr_t stack_hi, uintptr_t *pcs,
                      int max, int *truncated, uint64_t *hash)
{
    *hash = hp_stack_hash(pcs, 0);
    if (!cache || stack_hi < 32)
        return 0;
    uint64_t r0 = ip > 4096 ? shared_rule(ip) : 0;
    if (!is_code(r0, ip))
        return 0;
    int n = walk_plain(ip, sp, bp, stack_hi - 16, pcs, max, truncated, r0);
    *hash = hp_stack_hash(pcs, n);
    return n;
}

int hp_cfi_walk(uintptr_t ip, uintptr_t sp, uintptr_t bp, uintptr_t stack_hi, uintptr_t *pcs, int max,
                int *truncated, struct hp_walk_cache *wc, const uintptr_t **out, uint64_t *hash)
{
    *out = pcs;
    if (!wc)
        return hp_cfi_walk_plain(ip, sp, bp, stack_hi, pcs, max, truncated, hash);
    *hash = hp_stack_hash(pcs, 0);
    wc->res_out = NULL; /* (for hp_cfi_site_add) no walk in the cache */
    if (!cache || stack_hi < 32)
        return 0;
    uintptr_t hi16 = stack_hi - 16;
    uint32_t gen = __atomic_load_n(&code_gen, __ATOMIC_ACQUIRE);
    if (HP_UNLIKELY(wc->gen != gen))
        walk_cache_new_code(wc, gen);
    /* The first address must be code too. */
    uint64_t r;
    if (wc->first_ip == ip) {
        r = wc->first_rule; /* allocations keep coming through the same few wrappers */
    } else {
        r = thread_rule(wc, ip);
        wc->first_ip = ip;
        wc->first_rule = r;
    }
    if (!is_code(r, ip))
        return 0;
    wc->max = max;
    wc->pcs = pcs;
    /* The previous walk is usable only on the same stack; the walk follows its frames by
     * stack pointer (both walks go up the stack). */
    long j = wc->base < HP_WALK_MAX && wc->stack_hi == stack_hi ? wc->base : HP_WALK_MAX;
    wc->hi16 = hi16;
    struct hp_walk_state *st = &wc->st;
    *st = (struct hp_walk_state){ip, sp, bp, r, 0, j, WS_RUN}; /* sp[END] is UINTPTR_MAX */
    int n;
    while ((n = walk_run(wc)) < 0) {
        if (st->why == WS_MISS) {
            st->r = thread_rule_miss(wc, st->ip, st->ip & (HP_WALK_RULES - 1));
            if (st->r & (R_VALID | R_IN_OBJECT)) {
                st->why = WS_RUN;
                continue;
            }
        }
        /* No call frame information: code only if in an executable mapping, then stepped with
         * its frame pointer. */
        st->r = 0;
        st->why = in_exec_mapping(st->ip) ? WS_RUN : WS_NOT_CODE;
    }
    *out = wc->res_out;
    *hash = wc->res_hash;
    *truncated = wc->res_trunc;
    return n;
}

/* ---------- the site cache (unwind.h) ---------- */

/* Lookups per judgement of the hit rate; lookups skipped after a window with under a quarter
 * of hits once the sets are at their largest (a program whose stacks keep changing would pay
 * for lookups and additions that never pay back): HP_SITE_SKIP after the first such window,
 * twice as many after each further one in a row, up to 32 times. And no entries are made for
 * a window after one (at the largest size) that made more entries than it had hits, for two
 * after the next such, and so on up to 32: a thread with more stacks than the sets hold keeps
 * replacing entries that would not have been used again (bench/alloc_bench keyed by the frame
 * alone at 256 sets: 28% hits for 70% additions, each costing about as much as the walks of
 * two allocations), while its lookups go on finding the entries there are. Either, three
 * times in a row while the sets are keyed by the frame alone, keys them deep (site_go_deep). */
#define HP_SITE_WINDOW 1024
#define HP_SITE_DEEP_AFTER 3
#define HP_SITE_SKIP 32768
#define ORDER_INIT 0xe4 /* ways 0, 1, 2, 3 from most to least recently used */

static inline uint64_t site_set(uintptr_t ip, uintptr_t sp, uint64_t mask)
{
    return (((ip ^ (sp * 0x9e3779b97f4a7c15ull)) * 0x9e3779b97f4a7c15ull) >> 40) & mask;
}

/* Way w becomes the most recently used of order o. */
static inline uint8_t order_touch(uint8_t o, unsigned w)
{
    unsigned p = 0;
    while (((o >> (2 * p)) & 3) != w)
        p++;
    unsigned below = o & ((1u << (2 * p)) - 1);
    unsigned above = p == 3 ? 0 : o & ~((1u << (2 * p + 2)) - 1) & 0xff;
    return (uint8_t)(above | (below << 2) | w);
}

static void sites_clear(struct hp_site_cache *sc)
{
    if (!sc->tags)
        return;
    hp_memset(sc->tags, 0, (sc->mask + 1) * sizeof *sc->tags);
    hp_memset(sc->order, ORDER_INIT, sc->mask + 1);
}

void hp_walk_cache_forget(struct hp_walk_cache *wc)
{
    hp_walk_cache_reset(wc);
    sites_clear(&wc->sites);
    wc->sites.pending = 0;
}

/* Make the cache n sets, empty; 0 without metadata memory (then the old sets stay). */
static HP_COLD int sites_alloc(struct hp_site_cache *sc, uint64_t n)
{
    struct hp_site_tag(*tags)[HP_SITE_WAYS] = hp_meta_alloc(n * sizeof *tags);
    struct hp_site *body = tags ? hp_meta_alloc(n * HP_SITE_WAYS * sizeof *body) : NULL;
    uint8_t *order = body ? hp_meta_alloc(n) : NULL;
    if (!order)
        return 0; /* what was allocated stays in the arena, unused */
    hp_memset(order, ORDER_INIT, n);
    sc->order = order;
    sc->body = body;
    sc->mask = n - 1;
    __atomic_signal_fence(__ATOMIC_SEQ_CST);
    sc->tags = tags;
    sc->misses = 0;
    return 1;
}

/* An entry's checks after the first, and the caller's rbp, are kept only as a chain value.
 * Checks 1, 2, 3, ... go round four lanes, each its own chain h = (h ^ value) * K from 0 (a
 * single chain made a hit's checks one long dependency, a multiply after every load: four
 * run side by side); the lanes are then folded, each rotated by its own amount, and the
 * caller's rbp (0 when it does not matter) is the last step. Every step and every rotation is
 * a bijection, so a check with one value changed always ends elsewhere; with several changed,
 * their differences would have to cancel out exactly (two lanes changed alike cancel only when
 * that difference repeats every 16 bits or less, the rotations differing by 14 to 47 bits:
 * about one chance in 2^48 for the difference of two products by K). */
#define SITE_K 0x9fb21c651e98df25ull
#define SITE_LANES 4

static inline uint64_t site_step(uint64_t h, uint64_t v) { return (h ^ v) * SITE_K; }

static inline uint64_t site_rotl(uint64_t v, unsigned r) { return (v << r) | (v >> (64 - r)); }

static inline uint64_t site_fold(uint64_t h0, uint64_t h1, uint64_t h2, uint64_t h3, uint64_t bp)
{
    return site_step(h0 ^ site_rotl(h1, 17) ^ site_rotl(h2, 31) ^ site_rotl(h3, 47), bp);
}

/* Do the entry's slots still hold what its walk read, seen from stack pointer sp (on the same
 * stack: the caller compared the room above sp)? Check 0 exactly, first: another stack with the
 * same innermost frame nearly always parts there. Then the others, one to each of the four
 * chains in turn (hp_cfi_site_add pads them to a multiple of four with copies of check 0). */
static inline int site_holds(const struct hp_site *b, uintptr_t sp, uintptr_t bp)
{
    const uintptr_t *s = (const uintptr_t *)sp;
    uint64_t h0 = 0, h1 = 0, h2 = 0, h3 = 0;
    if (HP_LIKELY(b->n)) { /* (none: a walk of one frame, cut there or unable to step) */
        if (s[b->off[0]] != b->val0)
            return 0;
        for (const uint16_t *o = b->off + 1, *end = b->off + b->n; o < end; o += SITE_LANES) {
            h0 = site_step(h0, s[o[0]]);
            h1 = site_step(h1, s[o[1]]);
            h2 = site_step(h2, s[o[2]]);
            h3 = site_step(h3, s[o[3]]);
        }
    }
    return site_fold(h0, h1, h2, h3, bp & (0 - (uint64_t)b->bp_matters)) == b->sum;
}

/* The most sets a thread's site cache may have. */
static inline uint64_t sites_max(const struct hp_site_cache *sc)
{
    return sc->deep ? sc->deep : HP_SITE_SETS_MAX;
}

/* Keyed by the frame alone and at full size, HP_SITE_DEEP_AFTER windows in a row with under a
 * quarter of hits or with more entries made than hits (the cache resting or making no entries
 * in between, as below): more stacks under one frame and stack pointer than four ways hold
 * (python3 and node have one or two such windows in a run, apart; bench/alloc_bench's random
 * call chains one after another). The sets are keyed deep from then on, and start empty (the
 * entries there sit in sets chosen the other way). */
static int site_go_deep(struct hp_site_cache *sc)
{
    if (sc->deep || sc->mask != HP_SITE_SETS_MAX - 1)
        return 0;
    if (sc->hits >= HP_SITE_WINDOW / 4 && sc->hits >= sc->adds) {
        sc->bad_runs = 0;
        return 0;
    }
    if (++sc->bad_runs < HP_SITE_DEEP_AFTER)
        return 0;
    /* Growing past the sets keyed by the frame alone costs 640 KiB more: not once half of
     * the metadata budget is spent (many threads keyed deep would take what contexts need). */
    sc->deep = hp_meta_used() < hp_meta_budget() / 2 ? HP_SITE_SETS_DEEP_MAX : HP_SITE_SETS_MAX;
    sites_clear(sc);
    sc->misses = 0;
    sc->no_adds = sc->add_runs = sc->low_runs = 0;
    return 1;
}

/* Judge the window that just ended (the hit rate of the last HP_SITE_WINDOW lookups). */
static HP_COLD void site_window(struct hp_site_cache *sc)
{
    if (site_go_deep(sc)) {
        sc->tries = sc->hits = sc->adds = 0;
        return;
    }
    if (sc->hits < HP_SITE_WINDOW / 4 && sc->mask == sites_max(sc) - 1) {
        sc->off = HP_SITE_SKIP << sc->low_runs;
        if (sc->low_runs < 5)
            sc->low_runs++;
    } else {
        sc->low_runs = 0;
    }
    if (sc->no_adds) {
        sc->no_adds--;
    } else if (sc->mask == sites_max(sc) - 1 && sc->hits < sc->adds) {
        sc->no_adds = 1u << sc->add_runs;
        if (sc->add_runs < 5)
            sc->add_runs++;
    } else {
        sc->add_runs = 0;
    }
    sc->tries = sc->hits = sc->adds = 0;
}

/* The key that chooses a deep cache's set: the frame's address mixed with the return
 * addresses the walk's first HP_SITE_KEY_STEPS steps read (as far as it can step), found the
 * way the walk finds them (bounded reads within the stack, whatever the rules say). A
 * function of the frame and of the stack's contents alone, so a stack that holds what it held
 * when its entry was made finds that entry's set. Four steps: bench/alloc_bench's random
 * chains (about 1,600 stacks under 77 frames and stack pointers) then spread over the sets;
 * with two, the ways of a set mostly hold stacks that part further out, each a full check
 * (cost model against the sets keyed by the frame alone, without and with frame pointers:
 * two steps -10% and +6%, three -16% and -5%, four -20% and -14%, six -18% and -12%). */
#define HP_SITE_KEY_STEPS 4
static inline uint64_t site_key(struct hp_walk_cache *wc, uintptr_t ip, uintptr_t sp, uintptr_t bp,
                                uintptr_t hi)
{
    uintptr_t hi16 = hi - 16, at;
    uint64_t key = ip;
    uint64_t r = wc->first_ip == ip ? wc->first_rule : thread_rule(wc, ip);
    for (int k = 0; k < HP_SITE_KEY_STEPS; k++) {
        WALK_STEP(r, sp, bp, hi16, at, out);
        uintptr_t v = *(const uintptr_t *)at;
        key = (key ^ v) * 0x9e3779b97f4a7c15ull;
        if (k + 1 < HP_SITE_KEY_STEPS)
            r = thread_rule(wc, v);
    }
out:
    return key;
}

/* The lookup in the set of key (the frame's address, or site_key's), and on a miss what the
 * walk that follows needs to make an entry there. */
static inline __attribute__((always_inline)) uint32_t site_lookup(struct hp_walk_cache *wc, uint64_t key,
                                                                  uintptr_t ip, uintptr_t sp, uintptr_t bp,
                                                                  uintptr_t hi, int *truncated)
{
    struct hp_site_cache *sc = &wc->sites;
    /* Rules cached before code was unloaded: the walk that follows empties the sets. */
    if (HP_LIKELY(wc->gen == __atomic_load_n(&code_gen, __ATOMIC_ACQUIRE))) {
        uint64_t s = site_set(key, sp, sc->mask);
        const struct hp_site_tag *tg = sc->tags[s];
        unsigned o = sc->order[s];
        /* Most recently used first: stacks that share the key come back in runs. */
        for (unsigned i = 0; i < HP_SITE_WAYS; i++) {
            unsigned w = (o >> (2 * i)) & 3;
            if (tg[w].ip != ip || tg[w].sp != sp)
                continue;
            const struct hp_site *b = &sc->body[s * HP_SITE_WAYS + w];
            if (b->room != hi - sp || !site_holds(b, sp, bp))
                continue;
            if (i)
                sc->order[s] = order_touch((uint8_t)o, w);
            sc->hits++;
            *truncated = b->truncated;
            return b->id;
        }
    }
    uint64_t most = sites_max(sc);
    if (HP_UNLIKELY(++sc->misses > (sc->mask + 1) * HP_SITE_WAYS) && sc->mask < most - 1)
        sites_alloc(sc, (sc->mask + 1) * 4 < most ? (sc->mask + 1) * 4 : most);
    sc->q_set = site_set(key, sp, sc->mask); /* (the sets may have grown) */
    sc->q_ip = ip;
    sc->q_sp = sp;
    sc->q_bp = bp;
    sc->q_hi = hi;
    sc->pending = 1;
    return 0;
}

/* A deep cache's lookup: out of line, so the common one stays as it was (not cold: in a
 * thread keyed deep it is every allocation's). */
static __attribute__((noinline)) uint32_t site_lookup_deep(struct hp_walk_cache *wc, uintptr_t ip,
                                                           uintptr_t sp, uintptr_t bp, uintptr_t hi,
                                                           int *truncated)
{
    return site_lookup(wc, site_key(wc, ip, sp, bp, hi), ip, sp, bp, hi, truncated);
}

uint32_t hp_cfi_site_find(struct hp_walk_cache *wc, uintptr_t ip, uintptr_t sp, uintptr_t bp,
                          uintptr_t hi, int *truncated)
{
    struct hp_site_cache *sc = &wc->sites;
    sc->pending = 0;
    if (HP_UNLIKELY(!sc->tags) && !sites_alloc(sc, HP_SITE_SETS_MIN)) {
        sc->off = UINT32_MAX; /* no memory for it: (nearly) never again */
        return 0;
    }
    if (HP_UNLIKELY(++sc->tries == HP_SITE_WINDOW))
        site_window(sc);
    if (HP_UNLIKELY(sc->deep))
        return site_lookup_deep(wc, ip, sp, bp, hi, truncated);
    return site_lookup(wc, ip, ip, sp, bp, hi, truncated);
}

/* The rule of frame k of the walk at wc's [b, ...) that the lookup of sc asked for. */
static uint64_t site_rule(struct hp_walk_cache *wc, const struct hp_site_cache *sc, long b, int k)
{
    uintptr_t ip = wc->ip[b + k];
    if (k == 0 && wc->first_ip == sc->q_ip)
        return wc->first_rule;
    return thread_rule(wc, ip);
}

/* Check *m of entry e: the slot at offset off from the stack pointer holds val (and its value
 * goes into its lane's chain, or *val0 for check 0). 0 when the slot cannot be an entry's: not
 * 8-aligned, or past lim (the last slot on the stack, at most 512 KiB up). */
static inline __attribute__((always_inline)) int site_check(struct hp_site *e, uint32_t *m, uint64_t *lane,
                                                            uintptr_t *val0, uintptr_t off, uintptr_t lim,
                                                            uintptr_t val)
{
    if (off > lim || (off & 7))
        return 0;
    e->off[*m] = (uint16_t)(off >> 3);
    if (*m == 0)
        *val0 = val;
    else
        lane[(*m - 1) % SITE_LANES] = site_step(lane[(*m - 1) % SITE_LANES], val);
    ++*m;
    return 1;
}

void hp_cfi_site_add(struct hp_walk_cache *wc, uint32_t id)
{
    struct hp_site_cache *sc = &wc->sites;
    if (!sc->pending)
        return;
    sc->pending = 0;
    if (sc->no_adds)
        return;
    /* The walk's frames are in wc's arrays, [base, base + n) (not when it was too deep for
     * them, nor when there was no walk). */
    long b = wc->base;
    if (!id || b >= HP_WALK_MAX || wc->res_out != &wc->ip[b] || !sc->tags)
        return;
    int n = HP_WALK_MAX - (int)b < wc->max ? HP_WALK_MAX - (int)b : wc->max;
    int trunc = wc->res_trunc;
    if (n > HP_SITE_FRAMES || wc->ip[b] != sc->q_ip)
        return;
    uintptr_t sp = sc->q_sp, room = sc->q_hi - sp;
    if (room < 8 || room > UINT32_MAX || (sp & 7))
        return;
    uint64_t s = sc->q_set;
    unsigned w = sc->order[s] >> 6; /* the least recently used way */
    struct hp_site *e = &sc->body[s * HP_SITE_WAYS + w];
    sc->tags[s][w].ip = 0; /* empty until the entry is whole */
    /* What the walk read, frame by frame: frame k's step read frame k + 1's address from
     * slot[k] (the last frame's step counts when it gave the walk's end: not when the walk
     * was cut at the depth limit, nor when there was no step). And where a frame found its
     * CFA through rbp (or stepped by frame pointer), the rbp it used: the caller's register
     * (then compared as it is: bp_matters) or a value a frame further in restored from the
     * stack (then that slot is checked too: a frame with alloca at the same stack pointer
     * can have its frame base elsewhere). */
    int steps = n - 1 + (!trunc && wc->slot[b + n - 1] != (uintptr_t)&hp_walk_no_slot);
    uint32_t m = 0;
    uint64_t lane[SITE_LANES] = {0, 0, 0, 0};
    uintptr_t val0 = 0;
    int matters = 0, checked = -1; /* checked: the frame whose restore is checked last */
    uintptr_t hi = sc->q_hi;
    /* (A walk that ended because its last frame could not step: whether that frame fails to
     * step again can depend on its rbp too; its slot is not read.) */
    int frames = trunc ? steps : n;
    if (steps > HP_SITE_CHECKS)
        return;
    /* Every slot checked must be on the stack walked (site_check): a walk that read one
     * elsewhere is not kept. */
    uintptr_t lim = room - 8 < ((uintptr_t)UINT16_MAX << 3) ? room - 8 : ((uintptr_t)UINT16_MAX << 3);
    for (int k = 0; k < frames; k++) {
        uintptr_t at = wc->slot[b + k], bp = wc->bp[b + k], fsp = wc->sp[b + k];
        /* A step through rbp takes a CFA within 2 GiB of it and on the stack: a frame whose
         * rbp is nowhere near (an ordinary register's value, in code without frame pointers)
         * did not use it, and its rule need not be looked up. */
        if (bp - (fsp - ((uintptr_t)1 << 31)) < hi - fsp + ((uintptr_t)1 << 32)) {
            uint64_t r = site_rule(wc, sc, b, k);
            if (!(r & R_VALID) || (r & (R_FP | R_CFA_RBP))) {
                /* Which frame further in restored the rbp it used, if any? */
                int j = k - 1;
                uint64_t rj = 0;
                for (; j >= 0; j--) {
                    rj = site_rule(wc, sc, b, j);
                    if (!(rj & R_VALID) || (rj & (R_FP | R_RBP_SAVED)))
                        break;
                }
                if (j < 0) {
                    matters = 1;
                } else if (j != checked) {
                    /* R_FP and frames without call frame information read the caller's rbp
                     * at rbp; R_RBP_SAVED at the CFA (the slot + 8) plus the rule's offset */
                    uintptr_t from = (!(rj & R_VALID) || (rj & R_FP))
                                         ? wc->bp[b + j]
                                         : wc->slot[b + j] + 8 + (uintptr_t)(intptr_t)(int16_t)(rj >> 16);
                    if (steps + (int)m - k >= HP_SITE_CHECKS ||
                        !site_check(e, &m, lane, &val0, from - sp, lim, bp))
                        return;
                    checked = j;
                }
            }
        }
        if (k == steps)
            break;
        if (!site_check(e, &m, lane, &val0, at - sp, lim, wc->ip[b + k + 1]))
            return;
    }
    for (; m && ((m - 1) % SITE_LANES); m++) { /* padding: the first check again */
        e->off[m] = e->off[0];
        lane[(m - 1) % SITE_LANES] = site_step(lane[(m - 1) % SITE_LANES], val0);
    }
    e->n = (uint8_t)m;
    e->bp_matters = (uint8_t)matters;
    e->sum = site_fold(lane[0], lane[1], lane[2], lane[3], matters ? sc->q_bp : 0);
    e->val0 = val0;
    e->room = (uint32_t)room;
    e->id = id;
    e->truncated = (uint8_t)trunc;
    sc->tags[s][w] = (struct hp_site_tag){sc->q_ip, sp};
    sc->order[s] = order_touch(sc->order[s], w);
    sc->adds++;
}

#else

int hp_cfi_init(void) { return -1; }

int hp_cfi_walk(uintptr_t ip, uintptr_t sp, uintptr_t bp, uintptr_t stack_hi, uintptr_t *pcs, int max,
                int *truncated, struct hp_walk_cache *wc, const uintptr_t **out, uint64_t *hash)
{
    (void)ip, (void)sp, (void)bp, (void)stack_hi, (void)max, (void)truncated, (void)wc;
    *out = pcs;
    *hash = hp_stack_hash(pcs, 0);
    return 0;
}

int hp_cfi_walk_plain(uintptr_t ip, uintptr_t sp, uintptr_t bp, uintptr_t stack_hi, uintptr_t *pcs,
                      int max, int *truncated, uint64_t *hash)
{
    (void)ip, (void)sp, (void)bp, (void)stack_hi, (void)max, (void)truncated;
    *hash = hp_stack_hash(pcs, 0);
    return 0;
}

void hp_walk_cache_reset(struct hp_walk_cache *wc) { wc->base = HP_WALK_MAX; }
void hp_walk_cache_forget(struct hp_walk_cache *wc) { wc->base = HP_WALK_MAX; }

uint32_t hp_cfi_site_find(struct hp_walk_cache *wc, uintptr_t ip, uintptr_t sp, uintptr_t bp,
                          uintptr_t hi, int *truncated)
{
    (void)wc, (void)ip, (void)sp, (void)bp, (void)hi, (void)truncated;
    return 0;
}

void hp_cfi_site_add(struct hp_walk_cache *wc, uint32_t id) { (void)wc, (void)id; }

#endif
