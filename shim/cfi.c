/* The cfi unwinder: walks stacks of code built without frame pointers using the DWARF call
 * frame information every x86_64 object carries in .eh_frame, the way debuggers do, but with
 * each return address's rule (where the CFA, the return address and the saved rbp are) decoded
 * once and kept in a lock-free cache, so a walk costs a few loads per frame. Objects are found
 * with glibc's _dl_find_object, which takes no lock and sees every dlopen at once. */
#include "cfi.h"
#include "hp.h"
#include "meta.h"

#include <dlfcn.h>
#include <stdint.h>
#include <string.h>

#if defined(__x86_64__)

/* DWARF register numbers on x86_64. */
enum { REG_RBP = 6, REG_RSP = 7, REG_RA = 16 };

/* A decoded rule, packed in 64 bits so a cache slot is written with one store after its key:
 * bits 0..31 CFA offset (signed), 32..47 rbp save offset from the CFA (signed),
 * 48..55 return-address offset from the CFA (signed), 56 CFA is rbp-based (else rsp),
 * 57 rbp saved at the offset (else unchanged), 58 valid (else: cannot unwind past here). */
#define R_CFA_RBP (1ull << 56)
#define R_RBP_SAVED (1ull << 57)
#define R_VALID (1ull << 58)
#define R_IN_OBJECT (1ull << 59) /* not unwindable, but the address is in a loaded object */

static inline uint64_t rule_pack(int32_t cfa_off, int cfa_rbp, int rbp_saved, int32_t rbp_off, int32_t ra_off)
{
    return (uint64_t)(uint32_t)cfa_off | ((uint64_t)(uint16_t)(int16_t)rbp_off << 32) |
           ((uint64_t)(uint8_t)(int8_t)ra_off << 48) | (cfa_rbp ? R_CFA_RBP : 0) |
           (rbp_saved ? R_RBP_SAVED : 0) | R_VALID;
}

/* The rule of code that keeps a frame pointer: CFA = rbp + 16, rbp saved at CFA - 16, the
 * return address at CFA - 8. */
#define R_FRAME_POINTER (16ull | ((uint64_t)(uint16_t)(int16_t)-16 << 32) | ((uint64_t)(uint8_t)(int8_t)-8 << 48) | \
                         R_CFA_RBP | R_RBP_SAVED | R_VALID)

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
    if (st.cfa_off < INT32_MIN || st.cfa_off > INT32_MAX || st.ra_off < -128 || st.ra_off > -8 ||
        (st.rbp_saved && (st.rbp_off < INT16_MIN || st.rbp_off > -8)))
        return 0;
    return rule_pack((int32_t)st.cfa_off, st.cfa_reg == REG_RBP, st.rbp_saved, (int32_t)st.rbp_off,
                     (int32_t)st.ra_off);
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

void hp_cfi_init(void)
{
    cache = hp_meta_map(CACHE_SLOTS * sizeof *cache);
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

/* One step from the frame (ip, sp, bp) whose rule is r: the caller's frame goes to *nip, *nsp,
 * *nbp, and *ra_slot says where *nip was read. Returns 0 when the frame cannot be left safely. */
static inline __attribute__((always_inline)) int step(uint64_t r, uintptr_t sp, uintptr_t bp,
                                                      uintptr_t stack_hi, uintptr_t *nip,
                                                      uintptr_t *nsp, uintptr_t *nbp,
                                                      uintptr_t *ra_slot)
{
    if (HP_LIKELY(r == R_FRAME_POINTER)) {
        /* The commonest rule, tested first and whole: then the next frame's addresses depend
         * on rbp alone, and the processor can run ahead of the rule lookups. */
        if (bp < sp || bp + 16 > stack_hi || bp + 16 <= sp)
            return 0;
        *nip = ((const uintptr_t *)bp)[1];
        *nbp = ((const uintptr_t *)bp)[0];
        *nsp = bp + 16;
        *ra_slot = bp + 8;
        return 1;
    }
    if (HP_LIKELY(r & R_VALID)) {
        /* Slots are 8 to 32 KiB below the CFA (decode_in_object), so a CFA in (sp, stack_hi]
         * (one unsigned comparison) and slots at or above sp keep every read inside
         * [sp, stack_hi) without wrapping around. */
        int32_t cfa_off = (int32_t)(uint32_t)r;
        uintptr_t cfa = ((r & R_CFA_RBP) ? bp : sp) + (intptr_t)cfa_off;
        uintptr_t ra_at = cfa + (intptr_t)(int8_t)(r >> 48);
        if (cfa - sp - 1 >= stack_hi - sp || ra_at < sp)
            return 0;
        *nbp = bp;
        if (r & R_RBP_SAVED) {
            uintptr_t at = cfa + (intptr_t)(int16_t)(r >> 32);
            if (at < sp)
                return 0;
            *nbp = *(const uintptr_t *)at;
        }
        *nip = *(const uintptr_t *)ra_at;
        *ra_slot = ra_at;
        *nsp = cfa;
        return 1;
    }
    /* No call frame information (JIT code, hand-written assembly): such code usually keeps
     * frame pointers, so try one frame-pointer step, checked like the rest. */
    if (bp <= sp || bp >= stack_hi || stack_hi - bp < 16 || (bp & 7))
        return 0;
    *nip = ((const uintptr_t *)bp)[1];
    *nsp = bp + 16;
    *nbp = ((const uintptr_t *)bp)[0];
    *ra_slot = bp + 8;
    return 1;
}

/* The rule for the next frame's return address in a walk without a thread cache (walk_plain),
 * where each lookup goes to the shared cache: recursion and loops repeat return addresses, so
 * the last two are remembered. Returns 0 when nip is not code. */
struct memo {
    uintptr_t pc[2];
    uint64_t r[2];
};

static HP_COLD uint64_t thread_rule_miss(struct hp_walk_cache *wc, uint64_t pc, uint64_t i)
{
    /* No user-space code address has the top bit (the shared cache's BUSY mark): such a pc
     * comes from the end of a stack or from garbage and has no rule. */
    uint64_t r = (pc & BUSY) ? 0 : rule_for(pc);
    wc->rules[i].pc = pc;
    wc->rules[i].rule = r;
    return r;
}

/* The rule for pc through the thread's own cache (wc may be NULL). */
static inline __attribute__((always_inline)) uint64_t thread_rule(struct hp_walk_cache *wc, uint64_t pc)
{
    if (!wc)
        return rule_for(pc);
    uint64_t i = pc & (HP_WALK_RULES - 1);
    if (HP_LIKELY(wc->rules[i].pc == pc))
        return wc->rules[i].rule;
    return thread_rule_miss(wc, pc, i);
}

static inline __attribute__((always_inline)) int next_rule(struct hp_walk_cache *wc, struct memo *m,
                                                           uintptr_t nip, uint64_t *r)
{
    if (nip == m->pc[0]) {
        *r = m->r[0];
    } else if (nip == m->pc[1]) {
        *r = m->r[1];
    } else {
        *r = nip > 4096 ? thread_rule(wc, nip - 1) : 0;
        m->pc[1] = m->pc[0];
        m->r[1] = m->r[0];
        m->pc[0] = nip;
        m->r[0] = *r;
    }
    /* The next frame counts only if its address is code: it has call frame information (found
     * through the loader's own object list, so objects loaded a moment ago count), or lies in
     * an executable mapping. */
    return (*r & (R_VALID | R_IN_OBJECT)) || hp_is_exec_mapping(nip);
}

/* The same for the walk with a thread cache, without the memo: a hit in the thread's rule
 * cache costs about what a memo miss does, and the memo hardly ever hits where new frames are
 * walked (2% of python3's, 19% of alloc_bench's recursive ones). */
static inline __attribute__((always_inline)) int next_rule_cached(struct hp_walk_cache *wc,
                                                                  uintptr_t nip, uint64_t *r)
{
    /* No test for small nip (the end of a stack is often 0): the thread cache then holds the
     * rule of pc nip - 1, which is 0 like that of any address outside every object. */
    *r = thread_rule(wc, nip - 1);
    return (*r & (R_VALID | R_IN_OBJECT)) || hp_is_exec_mapping(nip);
}

const uintptr_t hp_walk_no_slot = 0;

/* A walk without a cache: straight into pcs. */
static int walk_plain(uintptr_t ip, uintptr_t sp, uintptr_t bp, uintptr_t stack_hi, uintptr_t *pcs,
                      int max, int *truncated, uint64_t r0)
{
    struct memo m = {{ip, 0}, {r0, 0}};
    uint64_t r = m.r[0];
    int n = 0;
    for (;;) {
        if (n == max) {
            *truncated = 1;
            break;
        }
        pcs[n++] = ip;
        uintptr_t nip, nsp, nbp, slot;
        if (!step(r, sp, bp, stack_hi, &nip, &nsp, &nbp, &slot) || !next_rule(NULL, &m, nip, &r))
            break;
        ip = nip;
        sp = nsp;
        bp = nbp;
    }
    return n;
}

void hp_walk_cache_reset(struct hp_walk_cache *wc)
{
    for (int i = HP_WALK_MAX; i < HP_WALK_MAX + 3; i++) {
        wc->chk[i].slot = (uintptr_t)&hp_walk_no_slot;
        wc->chk[i].want = 0;
    }
    wc->base = HP_WALK_MAX;
    wc->hash[HP_WALK_MAX] = HP_STACK_HASH_SEED;
    wc->sp[HP_WALK_MAX] = UINTPTR_MAX; /* ends every search by stack pointer */
}

/* Does frame k of the previous walk still describe the stack, given that frames from *ok on
 * do? Each frame's return-address slot must still hold the next frame's address (ip[END]: the
 * value the last step read). When they all do, *ok moves down to k, so a later join in the
 * same walk reads no slot twice.
 *
 * The slots of saved frame registers need no check: with the same return addresses at the
 * same stack pointers, every frame outside k is the same activation or one at the very same
 * place, and a frame register that a rule reads is the frame base such an activation set up. */
static inline uintptr_t slot_differs(const struct hp_walk_cache *wc, int k)
{
    return *(const uintptr_t *)wc->chk[k].slot ^ wc->chk[k].want;
}

static inline int suffix_holds(const struct hp_walk_cache *wc, int k, int *ok)
{
    /* Nearly always every slot holds, so no test per slot: four slots per step, from k
     * outwards. The last step may read up to three slots past *ok, already known to hold, or
     * the padding past the end; all slots lie on the walked stack, so reading past a changed
     * one is as safe as reading it. */
    uintptr_t d = 0;
    for (int i = k; i < *ok; i += 4)
        d |= slot_differs(wc, i) | slot_differs(wc, i + 1) | slot_differs(wc, i + 2) | slot_differs(wc, i + 3);
    if (d)
        return 0;
    *ok = k;
    return 1;
}

/* The new frames are too many to sit in front of the reused ones (over HP_WALK_MAX in all):
 * hand out the innermost max frames and start afresh next time. */
static HP_COLD int walk_too_deep(struct hp_walk_cache *wc, int m, int reuse, int trunc,
                                 uintptr_t *pcs, int max, int *truncated, uint64_t *hash)
{
    const int END = HP_WALK_MAX;
    int n = 0;
    for (int k = 0; k < m && n < max; k++)
        pcs[n++] = wc->nf[k].ip;
    for (int k = reuse; k < END && n < max; k++)
        pcs[n++] = wc->ip[k];
    *truncated = trunc || m + (END - reuse) > max;
    *hash = hp_stack_hash(pcs, n);
    hp_walk_cache_reset(wc);
    return n;
}

/* The thread's rules and previous walk date from before code was unloaded. */
static HP_COLD void walk_cache_new_code(struct hp_walk_cache *wc, uint32_t gen)
{
    hp_memset(wc->rules, 0, sizeof wc->rules);
    wc->first_ip = 0;
    wc->first_rule = 0;
    hp_walk_cache_reset(wc);
    wc->gen = gen;
}

int hp_cfi_walk(uintptr_t ip, uintptr_t sp, uintptr_t bp, uintptr_t stack_hi, uintptr_t *pcs, int max,
                int *truncated, struct hp_walk_cache *wc, const uintptr_t **out, uint64_t *hash)
{
    *out = pcs;
    *hash = HP_STACK_HASH_SEED;
    if (!cache)
        return 0;
    if (wc) {
        uint32_t gen = __atomic_load_n(&code_gen, __ATOMIC_ACQUIRE);
        if (HP_UNLIKELY(wc->gen != gen))
            walk_cache_new_code(wc, gen);
    }
    /* The first address must be code too. */
    uint64_t r0;
    if (wc && wc->first_ip == ip) {
        r0 = wc->first_rule; /* allocations keep coming through the same few wrappers */
    } else {
        r0 = thread_rule(wc, ip - 1);
        if (wc) {
            wc->first_ip = ip;
            wc->first_rule = r0;
        }
    }
    if (!(r0 & (R_VALID | R_IN_OBJECT)) && !hp_is_exec_mapping(ip))
        return 0;
    if (!wc) {
        int n = walk_plain(ip, sp, bp, stack_hi, pcs, max, truncated, r0);
        *hash = hp_stack_hash(pcs, n);
        return n;
    }
    /* The previous walk is usable only on the same stack; j follows its frames by stack
     * pointer (both walks go up the stack), jsp is frame j's. */
    const int END = HP_WALK_MAX;
    int j = wc->base < END && wc->stack_hi == stack_hi ? wc->base : END;
    uintptr_t jsp = wc->sp[j]; /* sp[END] is UINTPTR_MAX */
    int ok = END;    /* frames ok.. of the previous walk are known to hold */
    int reuse = END; /* where the previous walk is joined; END: not at all */
    int m = 0, trunc = 0;
    uintptr_t last_read = 0; /* what the last new frame's step read (no join) */
    uint64_t r = r0;
    for (;;) {
        if (HP_UNLIKELY(sp >= jsp)) {
            while (jsp < sp)
                jsp = wc->sp[++j];
            /* A previous walk cut at the depth limit lacks its outer frames: joining it is
             * right only if it still gives as many frames as a walk from here would take. */
            if (jsp == sp && wc->ip[j] == ip && wc->bp[j] == bp &&
                (!wc->truncated || m + (END - j) >= max) && suffix_holds(wc, j, &ok)) {
                reuse = j;
                trunc = wc->truncated;
                break;
            }
        }
        if (m == max) {
            trunc = 1;
            /* Nothing read: the next walk joining here stops here too. */
            wc->nf[m - 1].slot = (uintptr_t)&hp_walk_no_slot;
            break;
        }
        wc->nf[m].ip = ip;
        wc->nf[m].sp = sp;
        wc->nf[m].bp = bp;
        uintptr_t nip, nsp, nbp;
        uintptr_t *slot = &wc->nf[m].slot;
        m++;
        if (!step(r, sp, bp, stack_hi, &nip, &nsp, &nbp, slot)) {
            *slot = (uintptr_t)&hp_walk_no_slot;
            break;
        }
        if (!next_rule_cached(wc, nip, &r)) {
            last_read = nip;
            break;
        }
        ip = nip;
        sp = nsp;
        bp = nbp;
    }
    if (HP_UNLIKELY(m > reuse))
        return walk_too_deep(wc, m, reuse, trunc, pcs, max, truncated, hash);
    /* The new frames go right below the joined ones (or at the top end), and are hashed from
     * the outside in. */
    int base = reuse - m;
    if (reuse == END)
        wc->ip[END] = last_read;
    for (int k = m - 1; k >= 0; k--) {
        int at = base + k;
        uintptr_t fip = wc->nf[k].ip;
        wc->chk[at].want = wc->ip[at + 1];
        wc->ip[at] = fip;
        wc->sp[at] = wc->nf[k].sp;
        wc->bp[at] = wc->nf[k].bp;
        wc->chk[at].slot = wc->nf[k].slot;
        wc->hash[at] = hp_stack_hash_step(wc->hash[at + 1], fip);
    }
    wc->base = base;
    wc->truncated = trunc;
    wc->stack_hi = stack_hi;
    int n = END - base;
    *out = &wc->ip[base];
    if (n > max) {
        n = max;
        trunc = 1;
        *hash = hp_stack_hash(*out, n);
    } else {
        *hash = wc->hash[base];
    }
    *truncated = trunc;
    return n;
}

#else

void hp_cfi_init(void) {}

int hp_cfi_walk(uintptr_t ip, uintptr_t sp, uintptr_t bp, uintptr_t stack_hi, uintptr_t *pcs, int max,
                int *truncated, struct hp_walk_cache *wc, const uintptr_t **out, uint64_t *hash)
{
    (void)ip, (void)sp, (void)bp, (void)stack_hi, (void)max, (void)truncated, (void)wc;
    *out = pcs;
    *hash = HP_STACK_HASH_SEED;
    return 0;
}

void hp_walk_cache_reset(struct hp_walk_cache *wc) { wc->base = HP_WALK_MAX; }

#endif
