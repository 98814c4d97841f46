/* Which general registers an instruction reads and writes, for the code after a call of an
 * allocator entry point (x86_internal.h: hp_x86_reads_clobbered). gcc's interprocedural register
 * allocation (-fipa-ra, on at -O2) lets a caller keep a value in a register the ABI says a call
 * may clobber, when it knows the callee leaves it alone; once the callee is patched to lead to
 * the shim, the value is gone. Only the common encodings are told apart; any other instruction
 * counts as reading every register it names (the safe answer). */
#include "x86_internal.h"

#define CLOBBERED 0x0fc6u /* rcx rdx rsi rdi r8 r9 r10 r11: the callee's to clobber, less rax */
#define BUDGET 256        /* instructions looked at after one call */
#define PATHS 32

#define R_RCX (1u << 1)
#define R_RDX (1u << 2)
#define R_RSI (1u << 6)
#define R_RDI (1u << 7)

struct use {
    unsigned reads, writes; /* bit n: register n (rax 0 .. r15 15); writes are whole registers */
};

/* The registers instruction in (decoded at c) reads and writes. One function past the usual
 * length on purpose: it is the opcode map read as one table, every case sharing the prefix
 * and REX state decoded at its top. */
static struct use uses(const uint8_t *c, const struct hp_x86_insn *in)
{
    int i = 0, opsize16 = 0, rep = 0;
    for (;; i++) {
        uint8_t b = c[i];
        if (b == 0x66)
            opsize16 = 1;
        else if (b == 0xf2 || b == 0xf3)
            rep = 1;
        else if (b != 0xf0 && b != 0x2e && b != 0x36 && b != 0x3e && b != 0x26 && b != 0x64 && b != 0x65)
            break;
    }
    int rex = 0;
    if ((c[i] & 0xf0) == 0x40)
        rex = c[i++];
    int w = (rex >> 3) & 1;
    unsigned op = c[i++];
    int twobyte = 0;
    if (op == 0x0f) {
        twobyte = 1;
        op = c[i++];
        if (op == 0x38 || op == 0x3a)
            op = op << 8 | c[i++]; /* 0x38xx, 0x3axx */
    }
    /* Opcodes with the register in their low bits, and those without ModRM. */
    if (!twobyte) {
        unsigned reg = (op & 7) | ((rex & 1) << 3);
        if (op >= 0x50 && op <= 0x57)
            return (struct use){1u << reg, 0};
        if (op >= 0x58 && op <= 0x5f)
            return (struct use){0, 1u << reg};
        if (op >= 0xb8 && op <= 0xbf)
            return (struct use){0, opsize16 ? 0 : 1u << reg};
        if (op >= 0xb0 && op <= 0xb7)
            return (struct use){1u << reg, 0}; /* a byte of it: the rest is still read later */
        if (op >= 0x91 && op <= 0x97)
            return (struct use){1u << reg | 1, 0};
        if (op == 0x99)
            return (struct use){1, w || !opsize16 ? R_RDX : 0}; /* cdq, cqo */
        if (op >= 0xa4 && op <= 0xaf) { /* string operations: movs, cmps, stos, lods, scas */
            unsigned src = op <= 0xa7 || op == 0xac || op == 0xad ? R_RSI : 0;
            unsigned dst = op == 0xac || op == 0xad ? 0 : R_RDI;
            return (struct use){(rep ? R_RCX : 0) | src | dst | 1, 0};
        }
    } else if (op == 0x05) {
        return (struct use){R_RDI | R_RSI | R_RDX | (1u << 10) | (1u << 8) | (1u << 9) | 1, 0}; /* syscall */
    }
    if (in->modrm < 0)
        return (struct use){1, 0}; /* an operation on al/eax, or none: rax at most */
    i = in->modrm;
    uint8_t m = c[i++];
    int mod = m >> 6;
    unsigned reg = ((m >> 3) & 7) | ((rex & 4) << 1), rm = (m & 7) | ((rex & 1) << 3);
    unsigned mem = 0; /* registers the memory operand's address reads */
    if (mod != 3) {
        if ((m & 7) == 4) {
            uint8_t sib = c[i];
            unsigned index = ((sib >> 3) & 7) | ((rex & 2) << 2), base = (sib & 7) | ((rex & 1) << 3);
            if (index != 4)
                mem |= 1u << index;
            if (!(mod == 0 && (sib & 7) == 5))
                mem |= 1u << base;
        } else if (!(mod == 0 && (m & 7) == 5)) {
            mem |= 1u << rm;
        }
    }
    unsigned rmreg = mod == 3 ? 1u << rm : 0;
    int full = !opsize16; /* a 32- or 64-bit write replaces the whole register */
    if (!twobyte) {
        switch (op) {
        case 0x8b: /* mov r, r/m */
            return (struct use){mem | rmreg, full ? 1u << reg : 0};
        case 0x89: /* mov r/m, r */
            return (struct use){mem | 1u << reg, full ? rmreg : 0};
        case 0x8d: /* lea */
            return (struct use){mem, full ? 1u << reg : 0};
        case 0x63: /* movsxd */
            return (struct use){mem | rmreg, 1u << reg};
        case 0x31: case 0x33: case 0x29: case 0x2b: /* xor, sub: of itself, a zero */
            if (mod == 3 && reg == rm)
                return (struct use){0, full ? 1u << reg : 0};
            break;
        case 0xc7: /* mov r/m, imm */
            return (struct use){mem, full && ((m >> 3) & 7) == 0 ? rmreg : 0};
        case 0xd2: case 0xd3: /* shift by cl */
            return (struct use){mem | rmreg | R_RCX, 0};
        case 0xf6: case 0xf7: {
            int sub = (m >> 3) & 7;
            unsigned rd = op == 0xf7 && sub >= 6 ? R_RDX : 0; /* div, idiv */
            unsigned wr = op == 0xf7 && (sub == 4 || sub == 5) && full ? R_RDX : 0; /* mul, imul */
            return (struct use){mem | rmreg | rd | 1, wr};
        }
        default:
            break;
        }
    } else if (op == 0xb6 || op == 0xb7 || op == 0xbe || op == 0xbf) { /* movzx, movsx */
        return (struct use){mem | rmreg, full ? 1u << reg : 0};
    }
    if (!twobyte) {
        /* Groups: the reg field is part of the opcode. x87: it is, and the operand is memory or
         * a stack register. */
        if ((op >= 0x80 && op <= 0x83) || op == 0x8f || op == 0xc0 || op == 0xc1 || op == 0xc6 ||
            (op >= 0xd0 && op <= 0xd3) || op == 0xf6 || op == 0xfe || op == 0xff)
            return (struct use){mem | rmreg, 0};
        if (op >= 0xd8 && op <= 0xdf)
            return (struct use){mem, 0};
        return (struct use){mem | rmreg | 1u << reg, 0}; /* all it names is read */
    }
    /* Two-byte opcodes on general registers. */
    if ((op >= 0x40 && op <= 0x4f) || (op >= 0x90 && op <= 0x9f) || op == 0xa3 || op == 0xa4 ||
        op == 0xa5 || op == 0xab || op == 0xac || op == 0xad || op == 0xaf || op == 0xb0 ||
        op == 0xb1 || op == 0xb3 || op == 0xb8 || op == 0xbb || op == 0xbc || op == 0xbd ||
        op == 0xc0 || op == 0xc1)
        return (struct use){mem | rmreg | 1u << reg, 0};
    if (op == 0xba || op == 0x00 || op == 0x01 || op == 0xc7) /* groups */
        return (struct use){mem | rmreg, 0};
    /* SSE and the rest: the registers are xmm ones, but for those that take a general register
     * as their r/m source (movd/movq to xmm, cvtsi2sd, pinsrw/d/q). What they write into a
     * general register (movmskps, pextr*, cvttsd2si) is not counted as written: safe. */
    if (op == 0x6e || op == 0x2a || op == 0xc4 || op == 0x3a20 || op == 0x3a22)
        return (struct use){mem | rmreg, 0};
    if (op == 0x38f0 || op == 0x38f1) /* crc32, movbe */
        return (struct use){mem | rmreg | 1u << reg, 0};
    return (struct use){mem, 0};
}

int hp_x86_reads_clobbered(uintptr_t ret, uintptr_t lo, uintptr_t hi)
{
    struct {
        uintptr_t at;
        unsigned written;
    } path[PATHS];
    int npath = 1, budget = BUDGET;
    path[0].at = ret, path[0].written = 0;
    while (npath > 0) {
        uintptr_t at = path[--npath].at;
        unsigned written = path[npath].written;
        for (;;) {
            if (at < lo || at >= hi || budget-- <= 0)
                break;
            struct hp_x86_insn in;
            int avail = hi - at < 15 ? (int)(hi - at) : 15;
            if (!hp_x86_decode((const uint8_t *)at, avail, &in))
                break;
            if (in.kind == HP_X86_CALL || in.kind == HP_X86_END || (in.indirect && in.kind == HP_X86_PLAIN))
                break; /* another call clobbers them anyway; a return ends the function */
            struct use u = uses((const uint8_t *)at, &in);
            if (u.reads & CLOBBERED & ~written)
                return 1;
            written |= u.writes;
            if ((written & CLOBBERED) == CLOBBERED)
                break;
            if (in.kind == HP_X86_JCC || in.kind == HP_X86_JMP) {
                if (in.kind == HP_X86_JCC && npath < PATHS) {
                    path[npath].at = at + (uintptr_t)in.len;
                    path[npath++].written = written;
                }
                at = (uintptr_t)in.target;
                continue;
            }
            at += (uintptr_t)in.len;
        }
    }
    return 0;
}
