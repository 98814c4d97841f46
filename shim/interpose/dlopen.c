/* dlopen without RTLD_DEEPBIND (strip_deepbind=1): a library opened with it binds malloc and
 * free to libc's directly, and would then free the shim's blocks behind its back. The x86_64
 * entry is a few instructions of assembly that end in a jump, so glibc's dlopen still sees the
 * program as its caller (it resolves the library search path and $ORIGIN from that). */
#include "core/core.h"
#include "unwind/unwind.h"
#include "dump/dump.h"
#include "backend/backend.h"
#include "rt/rt.h"

#include <dlfcn.h>
#include <link.h>
#include <stddef.h>

/* Referenced only from the assembly below: `used` keeps link-time optimisation from dropping
 * or renaming them. */
HP_INTERNAL void *(*hp_real_dlopen)(const char *, int);
HP_INTERNAL __attribute__((used)) int hp_dlopen_mask = ~0;

HP_INTERNAL __attribute__((used, noinline)) void *hp_dlopen_target(void)
{
    hp_ready();
    static void *slot;
    hp_real_dlopen = (void *(*)(const char *, int))hp_next_sym(&slot, "dlopen");
    hp_dlopen_mask = hp_opt.strip_deepbind ? ~RTLD_DEEPBIND : ~0;
    return (void *)hp_real_dlopen;
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

static int read_unloads(struct dl_phdr_info *info, size_t size, void *arg)
{
    if (size >= offsetof(struct dl_phdr_info, dlpi_subs) + sizeof info->dlpi_subs)
        *(unsigned long long *)arg = info->dlpi_subs;
    return 1;
}

/* How many objects the loader has unloaded so far. */
static unsigned long long unloads(void)
{
    unsigned long long n = 0;
    dl_iterate_phdr(read_unloads, &n);
    return n;
}

/* dlclose: note the library first (retired.c), so frames in it can still be symbolised; when
 * code really went away (not just a reference), forget the unwinding rules cached for its
 * addresses, where the next library may be loaded. */
HP_EXPORT int dlclose(void *handle)
{
    static void *slot;
    int (*real)(void *) = (int (*)(void *))hp_next_sym(&slot, "dlclose");
    /* The shim's own work counts as inside the shim (it takes the shim's locks: a signal
     * handler's dump must wait for it), the library's destructors in real() do not. */
    hp_tls.depth++;
    hp_retire_note(handle);
    unsigned long long before = hp_ready() ? unloads() : 0;
    hp_leave();
    int r = real(handle);
    hp_tls.depth++;
    if (hp_ready() && unloads() != before)
        hp_stack_code_unloaded();
    hp_leave();
    return r;
}
