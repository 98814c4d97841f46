/* Changes of credentials, of the root directory and seccomp filters (prctl, and the seccomp
 * system call through syscall(3)): each a forward into core/sandbox.c, which makes the profile
 * file while the process still may. */
#include "core/core.h"
#include "rt/rt.h"

#include <errno.h>
#include <stdarg.h>
#include <sys/syscall.h>
#include <sys/types.h>

HP_EXPORT int setuid(uid_t uid) { return hp_setuid(uid); }
HP_EXPORT int seteuid(uid_t uid) { return hp_seteuid(uid); }
HP_EXPORT int setreuid(uid_t r, uid_t e) { return hp_setreuid(r, e); }
HP_EXPORT int setresuid(uid_t r, uid_t e, uid_t s) { return hp_setresuid(r, e, s); }
HP_EXPORT int setgid(gid_t gid) { return hp_setgid(gid); }
HP_EXPORT int setegid(gid_t gid) { return hp_setegid(gid); }
HP_EXPORT int setregid(gid_t r, gid_t e) { return hp_setregid(r, e); }
HP_EXPORT int setresgid(gid_t r, gid_t e, gid_t s) { return hp_setresgid(r, e, s); }
HP_EXPORT int setgroups(size_t n, const gid_t *list) { return hp_setgroups(n, list); }
HP_EXPORT int chroot(const char *path) { return hp_chroot(path); }

/* prctl takes its arguments as varargs: the four a request can have. */
HP_EXPORT int prctl(int option, ...)
{
    va_list ap;
    va_start(ap, option);
    unsigned long a = va_arg(ap, unsigned long), b = va_arg(ap, unsigned long);
    unsigned long c = va_arg(ap, unsigned long), d = va_arg(ap, unsigned long);
    va_end(ap);
    return hp_prctl(option, a, b, c, d);
}

#if defined(__x86_64__)
/* syscall(3) stays assembly: the shim makes its own system calls through it, on the allocation
 * path, so it must be glibc's instruction for instruction, without libc. Its seccomp and prctl
 * requests go to the two functions below (referenced only from the assembly, in this file so
 * that link-time optimisation keeps their names), the first a forward into core/sandbox.c. */
__attribute__((used, visibility("hidden"))) long hp_syscall_sandbox(long n, long a, long b, long c,
                                                                    long d, long e, long f)
{
    return hp_syscall_sandbox_request(n, a, b, c, d, e, f);
}

__attribute__((used, visibility("hidden"))) long hp_syscall_failed(long r)
{
    errno = (int)-r;
    return -1;
}

#define HP_XSTR(x) #x
#define HP_STR(x) HP_XSTR(x)

/* syscall(3), instruction for instruction what glibc's does for every other request: the
 * arguments move one register over, the sixth comes from the stack, and no frame is made, so
 * even a clone through it returns as it would from glibc's. The shim's own calls come here. */
HP_EXPORT __attribute__((naked)) long syscall(long n, ...)
{
    __asm__("cmp $" HP_STR(SYS_seccomp) ", %rdi\n\t"
            "je hp_syscall_sandbox\n\t"
            "cmp $" HP_STR(SYS_prctl) ", %rdi\n\t"
            "je hp_syscall_sandbox\n\t"
            "mov %rdi, %rax\n\t"
            "mov %rsi, %rdi\n\t"
            "mov %rdx, %rsi\n\t"
            "mov %rcx, %rdx\n\t"
            "mov %r8, %r10\n\t"
            "mov %r9, %r8\n\t"
            "mov 8(%rsp), %r9\n\t"
            "syscall\n\t"
            "cmp $-4095, %rax\n\t"
            "jae 1f\n\t"
            "ret\n"
            "1:\n\t"
            "mov %rax, %rdi\n\t"
            "jmp hp_syscall_failed\n\t");
}
#endif
