/* dlopen and dlclose: forwards into core/process.c (dlopen without RTLD_DEEPBIND, dlclose noted
 * for the unwinder and the module list). The x86_64 dlopen is a few instructions of assembly
 * that end in a jump, so glibc's dlopen still sees the program as its caller (it resolves the
 * library search path and $ORIGIN from that). */
#include "core/core.h"
#include "rt/rt.h"

/* Referenced only from the assembly below: `used` keeps link-time optimisation from dropping
 * or renaming them. hp_dlopen_target answers glibc's dlopen and sets the mask the mode is
 * and-ed with. */
HP_INTERNAL __attribute__((used)) int hp_dlopen_mask = ~0;

HP_INTERNAL __attribute__((used, noinline)) void *hp_dlopen_target(void)
{
    return hp_dlopen_next(&hp_dlopen_mask);
}

#if defined(__x86_64__)
__asm__(".text\n"
        ".globl dlopen\n"
        ".type dlopen, @function\n"
        "dlopen:\n"
        ".cfi_startproc\n"
        "  pushq %rdi\n"
        ".cfi_adjust_cfa_offset 8\n"
        "  pushq %rsi\n"
        ".cfi_adjust_cfa_offset 8\n"
        "  subq $8, %rsp\n"
        ".cfi_adjust_cfa_offset 8\n"
        "  call hp_dlopen_target\n"
        "  addq $8, %rsp\n"
        ".cfi_adjust_cfa_offset -8\n"
        "  popq %rsi\n"
        ".cfi_adjust_cfa_offset -8\n"
        "  popq %rdi\n"
        ".cfi_adjust_cfa_offset -8\n"
        "  andl hp_dlopen_mask(%rip), %esi\n"
        "  jmp *%rax\n"
        ".cfi_endproc\n"
        ".size dlopen, .-dlopen\n");
#else
/* Elsewhere a plain wrapper: dlopen then sees the shim as its caller. */
HP_EXPORT void *dlopen(const char *file, int mode)
{
    void *(*real)(const char *, int) = (void *(*)(const char *, int))hp_dlopen_target();
    return real(file, mode & hp_dlopen_mask);
}
#endif

HP_EXPORT int dlclose(void *handle) { return hp_dlclose(handle); }
