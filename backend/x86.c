/* x86_64 instruction lengths for backend/patch.c (see x86.h). Written from the opcode maps of
 * the Intel SDM, volume 2, appendix A; only the general-purpose, x87 and legacy SSE encodings
 * that compilers emit are taken, everything else (VEX/EVEX, far transfers, moffs, loops,
 * 16-bit addressing) is refused. */
#include "x86.h"


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

int hp_x86_decode(const uint8_t *code, int avail, struct hp_x86_insn *in)
{
    *in = (struct hp_x86_insn){0}; /* no library call: this file stands alone */
    in->rip_disp = -1;
    in->kind = HP_X86_PLAIN;
    int i = 0, opsize16 = 0, rex_w = 0;
#define NEED(n)                                                                                   \
    do {                                                                                          \
        if (i + (n) > avail || i + (n) > 15)                                                      \
            return 0;                                                                             \
    } while (0)

    /* Legacy prefixes, then at most one REX right before the opcode. */
    for (;;) {
        NEED(1);
        uint8_t b = code[i];
        if (b == 0x66) {
            opsize16 = 1;
        } else if (b == 0x67) {
            return 0; /* 32-bit addressing: not decoded */
        } else if (b != 0xf0 && b != 0xf2 && b != 0xf3 && b != 0x2e && b != 0x36 && b != 0x3e &&
                   b != 0x26 && b != 0x64 && b != 0x65) {
            break;
        }
        i++;
    }
    if ((code[i] & 0xf0) == 0x40) {
        rex_w = (code[i] >> 3) & 1;
        i++;
        NEED(1);
    }
    uint8_t op = code[i++];
    int modrm = 0, imm = 0, rel = 0; /* rel: bytes of a relative branch displacement */
    int two = 0;                      /* 1: 0F xx, 2: 0F 38 xx, 3: 0F 3A xx */
    int immz = opsize16 && !rex_w ? 2 : 4; /* "Iz": 16 or 32 bits */

    if (op == 0x0f) {
        NEED(1);
        uint8_t op2 = code[i++];
        if (op2 == 0x38) {
            NEED(1);
            i++;
            two = 2;
            modrm = 1;
        } else if (op2 == 0x3a) {
            NEED(1);
            i++;
            two = 3;
            modrm = 1;
            imm = 1;
        } else {
            two = 1;
            if (twobyte_refused(op2))
                return 0;
            if (op2 >= 0x80 && op2 <= 0x8f) {
                in->kind = HP_X86_JCC;
                in->cc = op2 & 15;
                rel = 4;
            } else if (!twobyte_no_modrm(op2)) {
                modrm = 1;
                if (twobyte_imm8(op2))
                    imm = 1;
            }
            if (op2 == 0x0b)
                in->kind = HP_X86_END; /* ud2 */
        }
    } else if (op < 0x40) {
        if ((op & 7) >= 6)
            return 0; /* segment pushes/pops, daa and friends: invalid in 64-bit mode */
        if ((op & 7) < 4)
            modrm = 1;
        else if ((op & 7) == 4)
            imm = 1;
        else
            imm = immz;
    } else if (op >= 0x50 && op <= 0x5f) {
        /* push/pop register */
    } else if (op >= 0x70 && op <= 0x7f) {
        in->kind = HP_X86_JCC;
        in->cc = op & 15;
        rel = 1;
    } else if (op >= 0x90 && op <= 0x99) {
        /* xchg/nop, cbw, cwd */
    } else if (op >= 0xb0 && op <= 0xb7) {
        imm = 1;
    } else if (op >= 0xb8 && op <= 0xbf) {
        imm = rex_w ? 8 : immz;
    } else if (op >= 0xd8 && op <= 0xdf) {
        modrm = 1; /* x87 */
    } else {
        switch (op) {
        case 0x63: case 0x84: case 0x85: case 0x86: case 0x87: case 0x88: case 0x89: case 0x8a:
        case 0x8b: case 0x8c: case 0x8d: case 0x8e: case 0x8f: case 0xd0: case 0xd1: case 0xd2:
        case 0xd3: case 0xfe:
            modrm = 1;
            break;
        case 0x68: imm = immz; break;
        case 0x69: modrm = 1; imm = immz; break;
        case 0x6a: imm = 1; break;
        case 0x6b: modrm = 1; imm = 1; break;
        case 0x80: case 0x83: case 0xc0: case 0xc1: case 0xc6: modrm = 1; imm = 1; break;
        case 0x81: modrm = 1; imm = immz; break;
        case 0xc7:
            NEED(1);
            if (code[i] == 0xf8)
                return 0; /* xbegin: relative */
            modrm = 1;
            imm = immz;
            break;
        case 0x9b: case 0x9c: case 0x9d: case 0x9e: case 0x9f: case 0xc9: case 0xf5:
        case 0xf8: case 0xf9: case 0xfa: case 0xfb: case 0xfc: case 0xfd:
        case 0xa4: case 0xa5: case 0xa6: case 0xa7: case 0xaa: case 0xab: case 0xac: case 0xad:
        case 0xae: case 0xaf:
            break;
        case 0xa8: imm = 1; break;
        case 0xa9: imm = immz; break;
        case 0xc2: imm = 2; in->kind = HP_X86_END; break;
        case 0xc3: case 0xcc: case 0xf4: in->kind = HP_X86_END; break;
        case 0xc8: imm = 3; break; /* enter imm16, imm8 */
        case 0xe8: rel = 4; in->kind = HP_X86_CALL; break;
        case 0xe9: rel = 4; in->kind = HP_X86_JMP; break;
        case 0xeb: rel = 1; in->kind = HP_X86_JMP; break;
        case 0xf6: case 0xf7:
            NEED(1);
            modrm = 1;
            if (((code[i] >> 3) & 7) < 2) /* test r/m, imm */
                imm = op == 0xf6 ? 1 : immz;
            break;
        case 0xff: {
            NEED(1);
            int reg = (code[i] >> 3) & 7;
            if (reg == 3 || reg == 5 || reg == 7)
                return 0; /* far call/jmp */
            if (reg == 4)
                in->kind = HP_X86_END; /* jmp r/m: where it goes is not known here */
            modrm = 1;
            break;
        }
        default:
            return 0;
        }
    }
    (void)two;

    if (modrm) {
        NEED(1);
        uint8_t m = code[i++];
        int mod = m >> 6, rm = m & 7;
        if (mod != 3) {
            if (rm == 4) {
                NEED(1);
                uint8_t sib = code[i++];
                if (mod == 0 && (sib & 7) == 5)
                    i += 4; /* no base: disp32 */
            } else if (mod == 0 && rm == 5) {
                in->rip_disp = i; /* rip-relative */
                i += 4;
            }
            if (mod == 1)
                i += 1;
            else if (mod == 2)
                i += 4;
        }
        NEED(0);
    }
    i += imm;
    NEED(rel);
    if (rel) {
        int64_t d = rel == 1 ? (int8_t)code[i] : (int32_t)((uint32_t)code[i] | (uint32_t)code[i + 1] << 8 |
                                                            (uint32_t)code[i + 2] << 16 |
                                                            (uint32_t)code[i + 3] << 24);
        i += rel;
        in->target = (uint64_t)(uintptr_t)code + (uint64_t)i + (uint64_t)d;
    }
    NEED(0);
    in->len = i;
    return i;
#undef NEED
}
