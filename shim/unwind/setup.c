/* Choosing the unwinder at start-up (unwinder=) and keeping the walks right across the
 * process's events: a seccomp filter installed, code unloaded, fork (the parent's side of fork
 * concerns libunwind alone: libunwind.c). */
#include "unwind/unwind_internal.h"

void hp_stack_init(void)
{
    hp_main_stack_init();
    hp_maps_refresh(1);
    if (hp_strcmp(hp_opt.unwinder, "cfi") != 0 && hp_strcmp(hp_opt.unwinder, "fp") != 0 &&
        hp_strcmp(hp_opt.unwinder, "libunwind") != 0) {
        hp_error("unknown unwinder '%s' (cfi, fp, libunwind); using cfi", hp_opt.unwinder);
        hp_strlcpy(hp_opt.unwinder, "cfi", sizeof hp_opt.unwinder);
    }
#if defined(__x86_64__)
    /* libunwind checks addresses with mincore (hp_stack_before_sandbox). */
    if (hp_filtered && hp_strcmp(hp_opt.unwinder, "libunwind") == 0) {
        hp_warn("unwinder=libunwind: the process runs under a seccomp filter, which may forbid "
                "libunwind's mincore; using the cfi unwinder (same stacks)");
        hp_strlcpy(hp_opt.unwinder, "cfi", sizeof hp_opt.unwinder);
    }
#endif
    if (hp_strcmp(hp_opt.unwinder, "cfi") == 0) {
#if defined(__x86_64__)
        hp_cfi_init();
        hp_use_cfi = 1;
#else
        hp_strlcpy(hp_opt.unwinder, "fp", sizeof hp_opt.unwinder); /* cfi is x86_64-only */
#endif
    }
}

void hp_stack_before_sandbox(void)
{
#if defined(__x86_64__)
    /* libunwind checks addresses with mincore, which a seccomp filter may punish with death;
     * the cfi walk reads only the stack and the loaded objects (through the loader). */
    if (!hp_use_cfi && hp_strcmp(hp_opt.unwinder, "libunwind") == 0 && hp_cfi_init() == 0)
        __atomic_store_n(&hp_use_cfi, 1, __ATOMIC_RELAXED);
#endif
}

void hp_stack_code_unloaded(void)
{
    if (hp_use_cfi)
        hp_cfi_code_unloaded();
    hp_maps_refresh(1); /* the fp walk's table of executable ranges */
}

void hp_stack_fork_child(void)
{
    hp_unw_fork_child();
    hp_exec_ranges_fork_child();
}
