/* x86_64 instruction lengths for backend/patch.c (x86_internal.h). Written from the opcode maps of
 * the Intel SDM, volume 2, appendix A; only the general-purpose, x87 and legacy SSE encodings
 * that compilers emit are taken, everything else (VEX/EVEX, far transfers, moffs, loops,
 * 16-bit addressing) is refused. */
#include "x86_internal.h"

/* Two-byte opcodes (0F xx) with no ModRM byte. */
static int twobyte_no_modrm(uint8_t op)
{
    switch (op) {
    case 0x05: case 0x06: case 0x07: case 0x08: case 0x09: case 0x0b:
    case 0x30: case 0x31: case 0x32: case 0x33: case 0x34: case 0x35: case 0x37:
    case 0x77: case 0xa0: case 0xa1: case 0xa2: case 0xa8: case 0xa9: case 0xaa:
        return 1;
    default:
        return op >= 0xc8 && op <= 0xcf; /* bswap */
    }
}

/* Two-byte opcodes with ModRM and an 8-bit immediate. */
static int twobyte_imm8(uint8_t op)
{
    switch (op) {
    case 0x70: case 0x71: case 0x72: case 0x73: case 0xa4: case 0xac: case 0xba:
    case 0xc2: case 0xc4: case 0xc5: case 0xc6:
        return 1;
    default:
        return 0;
    }
}

/* Two-byte opcodes that are undefined or not decoded here. */
static int twobyte_refused(uint8_t op)
{
    switch (op) {
    case 0x04: case 0x0a: case 0x0c: case 0x0e: case 0x0f: case 0x36: case 0x39:
    case 0x3b: case 0x3c: case 0x3d: case 0x3e: case 0x3f:
        return 1;
    default:
        return 0;
    }
}

/* An instruction being decoded: where the next byte is, what the prefixes said, and what the
 * opcode asks to follow it (a ModRM byte, an immediate, a relative displacement). */
struct dec {
    const uint8_t *code;
    int avail, i;
    int opsize16, rex_w;
    int modrm, imm, rel; /* rel: bytes of a relative branch displacement */
    struct hp_x86_insn *in;
};

/* Are n more bytes there, within the 15 an instruction may have? */
static int need(const struct dec *d, int n) { return d->i + n <= d->avail && d->i + n <= 15; }

/* "Iz": a 16-bit immediate under the operand-size prefix without REX.W, else 32 bits. */
static int immz(const struct dec *d) { return d->opsize16 && !d->rex_w ? 2 : 4; }

/* Legacy prefixes, then at most one REX right before the opcode. 0: refused. */
static int prefixes(struct dec *d)
{
    for (;;) {
        if (!need(d, 1))
            return 0;
        uint8_t b = d->code[d->i];
        if (b == 0x66) {
            d->opsize16 = 1;
        } else if (b == 0x67) {
            return 0; /* 32-bit addressing: not decoded */
        } else if (b != 0xf0 && b != 0xf2 && b != 0xf3 && b != 0x2e && b != 0x36 && b != 0x3e &&
                   b != 0x26 && b != 0x64 && b != 0x65) {
            break;
        }
        d->i++;
    }
    if ((d->code[d->i] & 0xf0) == 0x40) {
        d->rex_w = (d->code[d->i] >> 3) & 1;
        d->i++;
        if (!need(d, 1))
            return 0;
    }
    return 1;
}

/* The opcodes after 0F (0F xx, 0F 38 xx, 0F 3A xx). 0: refused. */
static int opcode_0f(struct dec *d)
{
    if (!need(d, 1))
        return 0;
    uint8_t op2 = d->code[d->i++];
    if (op2 == 0x38 || op2 == 0x3a) {
        if (!need(d, 1))
            return 0;
        d->i++;
        d->modrm = 1;
        d->imm = op2 == 0x3a;
        return 1;
    }
    if (twobyte_refused(op2))
        return 0;
    if (op2 >= 0x80 && op2 <= 0x8f) {
        d->in->kind = HP_X86_JCC;
        d->in->cc = op2 & 15;
        d->rel = 4;
    } else if (!twobyte_no_modrm(op2)) {
        d->modrm = 1;
        if (twobyte_imm8(op2))
            d->imm = 1;
    }
    if (op2 == 0x0b)
        d->in->kind = HP_X86_END; /* ud2 */
    return 1;
}

/* One-byte opcodes that come in rows of the opcode map. 1: handled, 0: refused, -1: not one
 * of these. */
static int opcode_rows(struct dec *d, uint8_t op)
{
    if (op < 0x40) {
        if ((op & 7) >= 6)
            return 0; /* segment pushes/pops, daa and friends: invalid in 64-bit mode */
        if ((op & 7) < 4)
            d->modrm = 1;
        else
            d->imm = (op & 7) == 4 ? 1 : immz(d);
    } else if (op >= 0x50 && op <= 0x5f) {
        /* push/pop register */
    } else if (op >= 0x70 && op <= 0x7f) {
        d->in->kind = HP_X86_JCC;
        d->in->cc = op & 15;
        d->rel = 1;
    } else if (op >= 0x90 && op <= 0x99) {
        /* xchg/nop, cbw, cwd */
    } else if (op >= 0xb0 && op <= 0xb7) {
        d->imm = 1;
    } else if (op >= 0xb8 && op <= 0xbf) {
        d->imm = d->rex_w ? 8 : immz(d);
    } else if (op >= 0xd8 && op <= 0xdf) {
        d->modrm = 1; /* x87 */
    } else {
        return -1;
    }
    return 1;
}

/* Groups whose ModRM reg field says what the instruction is (c7, f6/f7, ff). 0: refused. */
static int opcode_group(struct dec *d, uint8_t op)
{
    if (!need(d, 1))
        return 0;
    uint8_t m = d->code[d->i];
    int reg = (m >> 3) & 7;
    d->modrm = 1;
    if (op == 0xc7) {
        if (m == 0xf8)
            return 0; /* xbegin: relative */
        d->imm = immz(d);
    } else if (op == 0xf6 || op == 0xf7) {
        if (reg < 2) /* test r/m, imm */
            d->imm = op == 0xf6 ? 1 : immz(d);
    } else { /* 0xff */
        if (reg == 3 || reg == 5 || reg == 7)
            return 0; /* far call/jmp */
        if (reg == 2 || reg == 4)
            d->in->indirect = 1;
        if (reg == 4)
            d->in->kind = HP_X86_END; /* jmp r/m: where it goes is not known here */
    }
    return 1;
}

/* The other one-byte opcodes, one by one. 0: refused. */
static int opcode_single(struct dec *d, uint8_t op)
{
    switch (op) {
    case 0x63: case 0x84: case 0x85: case 0x86: case 0x87: case 0x88: case 0x89: case 0x8a:
    case 0x8b: case 0x8c: case 0x8d: case 0x8e: case 0x8f: case 0xd0: case 0xd1: case 0xd2:
    case 0xd3: case 0xfe:
        d->modrm = 1;
        break;
    case 0x68: d->imm = immz(d); break;
    case 0x69: d->modrm = 1; d->imm = immz(d); break;
    case 0x6a: d->imm = 1; break;
    case 0x6b: d->modrm = 1; d->imm = 1; break;
    case 0x80: case 0x83: case 0xc0: case 0xc1: case 0xc6: d->modrm = 1; d->imm = 1; break;
    case 0x81: d->modrm = 1; d->imm = immz(d); break;
    case 0xc7: case 0xf6: case 0xf7: case 0xff:
        return opcode_group(d, op);
    case 0x9b: case 0x9c: case 0x9d: case 0x9e: case 0x9f: case 0xc9: case 0xf5:
    case 0xf8: case 0xf9: case 0xfa: case 0xfb: case 0xfc: case 0xfd:
    case 0xa4: case 0xa5: case 0xa6: case 0xa7: case 0xaa: case 0xab: case 0xac: case 0xad:
    case 0xae: case 0xaf:
        break;
    case 0xa8: d->imm = 1; break;
    case 0xa9: d->imm = immz(d); break;
    case 0xc2: d->imm = 2; d->in->kind = HP_X86_END; break;
    case 0xc3: case 0xcc: case 0xf4: d->in->kind = HP_X86_END; break;
    case 0xc8: d->imm = 3; break; /* enter imm16, imm8 */
    case 0xe8: d->rel = 4; d->in->kind = HP_X86_CALL; break;
    case 0xe9: d->rel = 4; d->in->kind = HP_X86_JMP; break;
    case 0xeb: d->rel = 1; d->in->kind = HP_X86_JMP; break;
    default:
        return 0;
    }
    return 1;
}

/* The ModRM byte and what it adds: a SIB byte, a displacement (rip-relative noted). 0: the
 * bytes run out. */
static int modrm_operand(struct dec *d)
{
    if (!need(d, 1))
        return 0;
    uint8_t m = d->code[d->i++];
    int mod = m >> 6, rm = m & 7;
    if (mod != 3) {
        if (rm == 4) {
            if (!need(d, 1))
                return 0;
            uint8_t sib = d->code[d->i++];
            if (mod == 0 && (sib & 7) == 5)
                d->i += 4; /* no base: disp32 */
        } else if (mod == 0 && rm == 5) {
            d->in->rip_disp = d->i; /* rip-relative */
            d->i += 4;
        }
        if (mod == 1)
            d->i += 1;
        else if (mod == 2)
            d->i += 4;
    }
    return need(d, 0);
}

int hp_x86_decode(const uint8_t *code, int avail, struct hp_x86_insn *in)
{
    *in = (struct hp_x86_insn){0}; /* no library call: this file stands alone */
    in->rip_disp = -1;
    in->modrm = -1;
    in->kind = HP_X86_PLAIN;
    struct dec d = {.code = code, .avail = avail, .in = in};
    if (!prefixes(&d))
        return 0;
    uint8_t op = code[d.i++];
    int ok;
    if (op == 0x0f) {
        ok = opcode_0f(&d);
    } else {
        ok = opcode_rows(&d, op);
        if (ok < 0)
            ok = opcode_single(&d, op);
    }
    if (d.modrm)
        in->modrm = d.i;
    if (!ok || (d.modrm && !modrm_operand(&d)))
        return 0;
    d.i += d.imm;
    if (!need(&d, d.rel))
        return 0;
    if (d.rel) {
        const uint8_t *r = code + d.i;
        int64_t disp = d.rel == 1 ? (int8_t)r[0]
                                  : (int32_t)((uint32_t)r[0] | (uint32_t)r[1] << 8 |
                                              (uint32_t)r[2] << 16 | (uint32_t)r[3] << 24);
        d.i += d.rel;
        in->target = (uint64_t)(uintptr_t)code + (uint64_t)d.i + (uint64_t)disp;
    }
    if (!need(&d, 0))
        return 0;
    in->len = d.i;
    return d.i;
}
