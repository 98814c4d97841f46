/* A small x86_64 instruction decoder: just enough to move the first instructions of a function
 * elsewhere (backend/patch.c). It knows the length of the instructions compilers put at the
 * start of functions, whether one is relative to the instruction pointer, and what kind of
 * branch it is; anything it does not know it refuses, so the caller can leave that function
 * alone. */
#ifndef HP_X86_H
#define HP_X86_H

#include <stdint.h>

enum hp_x86_kind {
    HP_X86_PLAIN,   /* falls through to the next instruction */
    HP_X86_JMP,     /* jmp rel8/rel32: target in .target */
    HP_X86_JCC,     /* conditional jump rel8/rel32: condition code in .cc, target in .target */
    HP_X86_CALL,    /* call rel32: target in .target */
    HP_X86_END,     /* ret, an indirect jmp, ud2, int3, hlt: control does not fall through */
};

struct hp_x86_insn {
    int len;              /* bytes */
    enum hp_x86_kind kind;
    int cc;               /* HP_X86_JCC: the condition (0..15) */
    int rip_disp;         /* offset of a rip-relative disp32 in the instruction, or -1 */
    uint64_t target;      /* HP_X86_JMP/JCC/CALL: the absolute target */
    int indirect;         /* 1: call or jmp through a register or memory (ff /2, ff /4) */
    int modrm;            /* offset of its ModRM byte, or -1 */
};

/* Decode the instruction at code (its address is also where it runs). Returns its length, or
 * 0 for an instruction this decoder does not handle. avail: bytes readable at code. */
int hp_x86_decode(const uint8_t *code, int avail, struct hp_x86_insn *in);

#endif
