/* Reading the call frame information of .eh_frame: the rule (where the CFA, the return address
 * and the saved rbp are) for a code address, found through .eh_frame_hdr's table and decoded by
 * running the FDE's CFA instructions. Objects are found with glibc's _dl_find_object. */
#include "unwind/unwind_internal.h"

#include <dlfcn.h>

#if defined(__x86_64__)

/* DWARF register numbers on x86_64. */
enum { REG_RBP = 6, REG_RSP = 7, REG_RA = 16 };

static inline uint64_t rule_pack(int32_t cfa_off, int cfa_rbp, int rbp_saved, int32_t rbp_off)
{
    uint64_t r = ((uint64_t)(uint32_t)cfa_off << 32) | HP_R_VALID;
    if (cfa_rbp)
        r |= HP_R_CFA_RBP;
    if (rbp_saved)
        r |= HP_R_RBP_SAVED | ((uint64_t)(uint16_t)(int16_t)rbp_off << 16);
    if (cfa_rbp && cfa_off == 16 && rbp_saved && rbp_off == -16)
        r |= HP_R_FP;
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

/* One CFA instruction that changes a register's rule (or none): the CFA's, rbp's, the return
 * address's. Returns 0, or -1 on one this unwinder does not follow (expressions, registers
 * saved in registers) or does not know. initial: the CIE's rules (NULL while running the
 * CIE's own instructions), which the restore instructions go back to. */
static int cfa_rule_op(uint8_t op, struct cursor *c, const struct cie_info *ci, struct state *st,
                       const struct state *initial)
{
    switch (op) {
    case 0x00: break; /* nop */
    case 0x05: case 0x11: { /* offset_extended(_sf) */
        uint64_t reg = uleb(c);
        int64_t off = (op == 0x05 ? (int64_t)uleb(c) : sleb(c)) * ci->data_align;
        if (reg == REG_RBP)
            st->rbp_saved = 1, st->rbp_off = off;
        else if (reg == ci->ra_reg)
            st->ra_saved = 1, st->ra_off = off;
        break;
    }
    case 0x06: { /* restore_extended */
        uint64_t reg = uleb(c);
        if (reg == REG_RBP && initial)
            st->rbp_saved = initial->rbp_saved, st->rbp_off = initial->rbp_off;
        break;
    }
    case 0x07: case 0x08: { /* undefined, same_value */
        uint64_t reg = uleb(c);
        if (reg == REG_RBP)
            st->rbp_saved = 0;
        else if (reg == ci->ra_reg)
            return -1;
        break;
    }
    case 0x09: { /* register: a register saved in another one */
        uint64_t reg = uleb(c);
        uleb(c);
        if (reg == REG_RBP || reg == ci->ra_reg)
            return -1;
        break;
    }
    case 0x0c: st->cfa_reg = (int)uleb(c); st->cfa_off = (int64_t)uleb(c); break;
    case 0x0d: st->cfa_reg = (int)uleb(c); break;
    case 0x0e: st->cfa_off = (int64_t)uleb(c); break;
    case 0x12: st->cfa_reg = (int)uleb(c); st->cfa_off = sleb(c) * ci->data_align; break;
    case 0x13: st->cfa_off = sleb(c) * ci->data_align; break;
    case 0x0f: /* def_cfa_expression (PLT stubs, signal trampolines) */
        return -1;
    case 0x10: case 0x16: { /* expression, val_expression */
        uint64_t reg = uleb(c);
        uint64_t len = uleb(c);
        c->p += len;
        if (reg == REG_RBP || reg == ci->ra_reg)
            return -1;
        break;
    }
    case 0x14: case 0x15: { /* val_offset(_sf) */
        uint64_t reg = uleb(c);
        if (op == 0x14)
            uleb(c);
        else
            sleb(c);
        if (reg == REG_RBP || reg == ci->ra_reg)
            return -1;
        break;
    }
    case 0x2e: uleb(c); break; /* GNU_args_size */
    case 0x2f: { /* GNU_negative_offset_extended */
        uint64_t reg = uleb(c);
        int64_t off = -(int64_t)uleb(c) * ci->data_align;
        if (reg == REG_RBP)
            st->rbp_saved = 1, st->rbp_off = off;
        else if (reg == ci->ra_reg)
            st->ra_saved = 1, st->ra_off = off;
        break;
    }
    default:
        return -1;
    }
    return 0;
}

/* Run CFA instructions until the location passes target. Returns 0, or -1 on an instruction
 * this unwinder does not follow (expressions, registers saved in registers). The instructions
 * that move the location or keep states are here, the others in cfa_rule_op. */
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
        case 0x01: loc = encoded(&c, ci->fde_enc, 0); if (loc > target) return 0; break;
        case 0x02: loc += fixed(&c, 1) * ci->code_align; if (loc > target) return 0; break;
        case 0x03: loc += fixed(&c, 2) * ci->code_align; if (loc > target) return 0; break;
        case 0x04: loc += fixed(&c, 4) * ci->code_align; if (loc > target) return 0; break;
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
        default:
            if (cfa_rule_op(op, &c, ci, st, initial) != 0)
                return -1;
        }
    }
    return c.bad ? -1 : 0;
}

static uint64_t decode_in_object(const struct dl_find_object *fo, uint64_t pc);

/* Decode the rule for code address pc (a return address minus one): 0 when pc is in no loaded
 * object, HP_R_IN_OBJECT when it is but cannot be unwound through. */
uint64_t hp_decode_rule(uint64_t pc)
{
    struct dl_find_object fo;
    if (_dl_find_object((void *)(uintptr_t)pc, &fo) != 0)
        return 0;
    if (!fo.dlfo_eh_frame)
        return HP_R_IN_OBJECT;
    uint64_t r = decode_in_object(&fo, pc);
    return r ? r : HP_R_IN_OBJECT;
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

#endif
