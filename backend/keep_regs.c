/* The way from a patched entry point into the shim, keeping every register the caller may rely
 * on (patch_internal.h: hp_patch_call_value, hp_patch_call_void).
 *
 * A caller of an allocator compiled into the same program may count on more than the ABI
 * grants: gcc's -fipa-ra keeps values in registers the ABI lets the callee clobber (rcx, rdx,
 * rsi, rdi, r8-r11, xmm0-15) when it knows the callee leaves them alone, and the shim's code
 * does not (test/profiling/ipa_ra.c, with and without -DXMM, changes its output or crashes when
 * patched without this). So the entry stub of each patched function (patch.c) makes a frame,
 * saves r11, loads the shim's function into r11 and jumps here; this saves the rest, calls the
 * shim's function and restores all but the return value:
 *
 *   stub:     push %rbp; mov %rsp,%rbp; push %r11; movabs $shim_fn,%r11; jmp *routine
 *   routine:  push rax..r10 (8); sub $264,%rsp; movups xmm0-15; call *%r11;
 *             movups back; add $264,%rsp; pop r10..rcx; pop %rax or drop it; pop %r11; pop %rbp; ret
 *
 * The stack is 16-byte aligned at the call again (the entry's return address, rbp, r11, eight
 * registers, 264 bytes). The stub's frame is a frame-pointer frame whose return address is the
 * program's, so the shim's walk out of its own frames (unwind/, hp_leave_shim) passes this
 * routine, which is in the shim's code, and the stub, which it never returns into. The upper
 * halves of the AVX registers are not saved: the shim's code is built without AVX, and SSE
 * instructions leave them as they are. */
#include "patch_internal.h"

#if defined(__x86_64__)

#define HP_KEEP_ROUTINE(name, ret_label, last)                                                     \
    ".globl " #name "\n"                                                                           \
    ".hidden " #name "\n"                                                                          \
    ".type " #name ",@function\n"                                                                  \
    ".globl " #ret_label "\n"                                                                      \
    ".hidden " #ret_label "\n" #name ":\n"                                                         \
    ".cfi_startproc\n"                                                                             \
    ".cfi_def_cfa %rbp, 16\n"                                                                      \
    ".cfi_offset %rbp, -16\n"                                                                      \
    "endbr64\n"                                                                                    \
    "push %rax\n push %rcx\n push %rdx\n push %rsi\n push %rdi\n push %r8\n push %r9\n push %r10\n" \
    "sub $264, %rsp\n"                                                                             \
    "movups %xmm0, 0(%rsp)\n movups %xmm1, 16(%rsp)\n movups %xmm2, 32(%rsp)\n"                    \
    "movups %xmm3, 48(%rsp)\n movups %xmm4, 64(%rsp)\n movups %xmm5, 80(%rsp)\n"                   \
    "movups %xmm6, 96(%rsp)\n movups %xmm7, 112(%rsp)\n movups %xmm8, 128(%rsp)\n"                 \
    "movups %xmm9, 144(%rsp)\n movups %xmm10, 160(%rsp)\n movups %xmm11, 176(%rsp)\n"              \
    "movups %xmm12, 192(%rsp)\n movups %xmm13, 208(%rsp)\n movups %xmm14, 224(%rsp)\n"             \
    "movups %xmm15, 240(%rsp)\n"                                                                   \
    "call *%r11\n" #ret_label ":\n"                                                                \
    "movups 0(%rsp), %xmm0\n movups 16(%rsp), %xmm1\n movups 32(%rsp), %xmm2\n"                    \
    "movups 48(%rsp), %xmm3\n movups 64(%rsp), %xmm4\n movups 80(%rsp), %xmm5\n"                   \
    "movups 96(%rsp), %xmm6\n movups 112(%rsp), %xmm7\n movups 128(%rsp), %xmm8\n"                 \
    "movups 144(%rsp), %xmm9\n movups 160(%rsp), %xmm10\n movups 176(%rsp), %xmm11\n"              \
    "movups 192(%rsp), %xmm12\n movups 208(%rsp), %xmm13\n movups 224(%rsp), %xmm14\n"             \
    "movups 240(%rsp), %xmm15\n"                                                                   \
    "add $264, %rsp\n"                                                                             \
    "pop %r10\n pop %r9\n pop %r8\n pop %rdi\n pop %rsi\n pop %rdx\n pop %rcx\n" last "\n"         \
    "pop %r11\n"                                                                                   \
    "pop %rbp\n"                                                                                   \
    ".cfi_def_cfa %rsp, 8\n"                                                                       \
    ".cfi_restore %rbp\n"                                                                          \
    "ret\n"                                                                                        \
    ".cfi_endproc\n"                                                                               \
    ".size " #name ", . - " #name "\n"

/* Functions with a result keep the shim's rax; the others (free, delete) get the caller's back. */
__asm__(".text\n"
        ".p2align 4\n" HP_KEEP_ROUTINE(hp_patch_call_value, hp_patch_value_ret, "add $8, %rsp")
        ".p2align 4\n" HP_KEEP_ROUTINE(hp_patch_call_void, hp_patch_void_ret, "pop %rax"));

#endif
