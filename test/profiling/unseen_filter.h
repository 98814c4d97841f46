/* For test programs: a seccomp filter the shim does not see installed. Every system call is
 * allowed but those listed, which kill the process. It is installed with the syscall
 * instruction itself: the shim interposes prctl and syscall(3) and would notice a filter
 * installed through them (and then treat the process as sandboxed). Returns 0, or -1 when no
 * filter can be installed here (not x86_64, no seccomp). */
#ifndef HP_TEST_UNSEEN_FILTER_H
#define HP_TEST_UNSEEN_FILTER_H

#include <linux/filter.h>
#include <linux/seccomp.h>
#include <stddef.h>
#include <sys/prctl.h>
#include <sys/syscall.h>

static int install_unseen_kill_filter(const long *nrs, int n)
{
    struct sock_filter prog[2 + 2 * 8] = {
        BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
    };
    int len = 1;
    if (n > 8)
        return -1;
    for (int i = 0; i < n; i++) {
        prog[len++] = (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, (unsigned)nrs[i], 0, 1);
        prog[len++] = (struct sock_filter)BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_KILL_PROCESS);
    }
    prog[len++] = (struct sock_filter)BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW);
    struct sock_fprog fp = {(unsigned short)len, prog};
#if defined(__x86_64__)
    /* prctl wants its unused arguments zero. */
    long r;
    register long r10 __asm__("r10") = 0;
    register long r8 __asm__("r8") = 0;
    __asm__ volatile("syscall" : "=a"(r) : "0"((long)SYS_prctl), "D"((long)PR_SET_NO_NEW_PRIVS), "S"(1L),
                     "d"(0L), "r"(r10), "r"(r8) : "rcx", "r11", "memory");
    if (r != 0)
        return -1;
    __asm__ volatile("syscall" : "=a"(r) : "0"((long)SYS_prctl), "D"((long)PR_SET_SECCOMP),
                     "S"((long)SECCOMP_MODE_FILTER), "d"(&fp), "r"(r10), "r"(r8) : "rcx", "r11", "memory");
    return r == 0 ? 0 : -1;
#else
    (void)fp;
    return -1;
#endif
}

#endif
