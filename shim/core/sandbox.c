/* Changes of credentials, of the root directory and seccomp filters: the profile file is made
 * while the process still may, then glibc's function (or the system call) runs.
 *
 * A server started as root that hands its work to processes running as another user (nginx's
 * workers become nobody) makes them write their profiles at exit, when they may no longer
 * create a file where the user asked (the current directory, owned by root): their profiles
 * were lost. So before such a change the shim makes the profile file, with a provisional
 * profile in it (complete, should the process exec or be killed without another dump), and
 * keeps it open; the exit profile replaces it through that descriptor. Same for chroot, after
 * which the path means another file.
 *
 * Installing a seccomp filter is the same kind of change, and a harsher one: the filter of a
 * sandboxed worker (man-db's, OpenSSH's) may answer a system call it does not list with an
 * error, or kill the process. The filter arrives through prctl(PR_SET_SECCOMP) or the seccomp
 * system call, which glibc has no wrapper for: libseccomp and most programs make it through
 * syscall(3), so syscall is interposed too (interpose/creds.c sends those requests here).
 * Before a filter is installed the profile file is made as for a change of user; once one is,
 * hp_sandboxed keeps the shim to system calls the allocator needs anyway. */
#include "core/core.h"
#include "profile/profile.h"
#include "unwind/unwind.h"
#include "dump/dump.h"
#include "backend/backend.h"
#include "rt/rt.h"

#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <linux/seccomp.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/types.h>
#include <unistd.h>

static void *real_setuid, *real_setgid, *real_seteuid, *real_setegid, *real_setreuid,
    *real_setregid, *real_setresuid, *real_setresgid, *real_setgroups, *real_chroot, *real_prctl;

/* Privileged now, or the call changes a user id: either may cost the right to create the
 * profile file. (A process without privileges cannot change its groups.) A no-op such as
 * setuid(getuid()) by an unprivileged program changes nothing and makes no file. */
static int uid_change(uid_t r, uid_t e, uid_t s)
{
    uid_t cr, ce, cs;
    if (geteuid() == 0 || getresuid(&cr, &ce, &cs) != 0)
        return 1;
    return (r != (uid_t)-1 && r != cr) || (e != (uid_t)-1 && e != ce) || (s != (uid_t)-1 && s != cs);
}

static void before(int changes)
{
    if (changes) {
        int saved = errno;
        hp_dump_before_credentials();
        errno = saved;
    }
}

#define NEXT(slot, name, type) ((type)hp_next_sym(&(slot), name))
#define MISSING() (errno = ENOSYS, -1)

int hp_setuid(uid_t uid)
{
    int (*f)(uid_t) = NEXT(real_setuid, "setuid", int (*)(uid_t));
    before(uid_change(uid, uid, (uid_t)-1));
    return f ? f(uid) : MISSING();
}

int hp_seteuid(uid_t uid)
{
    int (*f)(uid_t) = NEXT(real_seteuid, "seteuid", int (*)(uid_t));
    before(uid_change((uid_t)-1, uid, (uid_t)-1));
    return f ? f(uid) : MISSING();
}

int hp_setreuid(uid_t r, uid_t e)
{
    int (*f)(uid_t, uid_t) = NEXT(real_setreuid, "setreuid", int (*)(uid_t, uid_t));
    before(uid_change(r, e, (uid_t)-1));
    return f ? f(r, e) : MISSING();
}

int hp_setresuid(uid_t r, uid_t e, uid_t s)
{
    int (*f)(uid_t, uid_t, uid_t) = NEXT(real_setresuid, "setresuid", int (*)(uid_t, uid_t, uid_t));
    before(uid_change(r, e, s));
    return f ? f(r, e, s) : MISSING();
}

/* Group changes matter only to a privileged process (others cannot make them). */
int hp_setgid(gid_t gid)
{
    int (*f)(gid_t) = NEXT(real_setgid, "setgid", int (*)(gid_t));
    before(geteuid() == 0);
    return f ? f(gid) : MISSING();
}

int hp_setegid(gid_t gid)
{
    int (*f)(gid_t) = NEXT(real_setegid, "setegid", int (*)(gid_t));
    before(geteuid() == 0);
    return f ? f(gid) : MISSING();
}

int hp_setregid(gid_t r, gid_t e)
{
    int (*f)(gid_t, gid_t) = NEXT(real_setregid, "setregid", int (*)(gid_t, gid_t));
    before(geteuid() == 0);
    return f ? f(r, e) : MISSING();
}

int hp_setresgid(gid_t r, gid_t e, gid_t s)
{
    int (*f)(gid_t, gid_t, gid_t) = NEXT(real_setresgid, "setresgid", int (*)(gid_t, gid_t, gid_t));
    before(geteuid() == 0);
    return f ? f(r, e, s) : MISSING();
}

int hp_setgroups(size_t n, const gid_t *list)
{
    int (*f)(size_t, const gid_t *) = NEXT(real_setgroups, "setgroups", int (*)(size_t, const gid_t *));
    before(geteuid() == 0);
    return f ? f(n, list) : MISSING();
}

int hp_chroot(const char *path)
{
    int (*f)(const char *) = NEXT(real_chroot, "chroot", int (*)(const char *));
    before(geteuid() == 0);
    /* The memory map and command line are read from /proc at every dump. */
    if (hp_proc_fd < 0 && hp_profiling)
        hp_proc_fd = (int)hp_sys_open("/proc", O_PATH | O_DIRECTORY | O_CLOEXEC, 0);
    return f ? f(path) : MISSING();
}

/* ---------- seccomp ---------- */

/* Does this request (of the seccomp system call) install a filter or strict mode? libseccomp
 * probes with an invalid strict-mode request (flags 1), which installs nothing. */
static int seccomp_installs(unsigned long op, unsigned long flags, unsigned long args)
{
    return op == SECCOMP_SET_MODE_FILTER || (op == SECCOMP_SET_MODE_STRICT && flags == 0 && args == 0);
}

static int prctl_installs(long option, unsigned long mode)
{
    return option == PR_SET_SECCOMP && (mode == SECCOMP_MODE_FILTER || mode == SECCOMP_MODE_STRICT);
}

/* Before a filter: the profile file, now, while the process may still make it. */
static void before_sandbox(void)
{
    __atomic_store_n(&hp_sandboxing, 1, __ATOMIC_SEQ_CST);
    before(1);
    hp_stack_before_sandbox();
    hp_profile_before_sandbox();
}

/* After the request: a filter in place (or one the kernel says it put there). */
static void after_sandbox(long r)
{
    if (r >= 0) {
        __atomic_store_n(&hp_filtered, 1, __ATOMIC_RELAXED);
        __atomic_store_n(&hp_sandboxed, 1, __ATOMIC_SEQ_CST);
    }
    __atomic_store_n(&hp_sandboxing, 0, __ATOMIC_SEQ_CST);
}

#if defined(__x86_64__)
/* seccomp and prctl requests made through syscall(3), which interpose/creds.c sends here: the
 * system call made with the instruction itself, as the interposed syscall makes every other. */
long hp_syscall_sandbox_request(long n, long a, long b, long c, long d, long e, long f)
{
    int sandboxing = n == SYS_seccomp ? seccomp_installs((unsigned long)a, (unsigned long)b, (unsigned long)c)
                                      : prctl_installs(a, (unsigned long)b);
    if (sandboxing)
        before_sandbox();
    register long r10 __asm__("r10") = d;
    register long r8 __asm__("r8") = e;
    register long r9 __asm__("r9") = f;
    long r;
    __asm__ volatile("syscall"
                     : "=a"(r)
                     : "0"(n), "D"(a), "S"(b), "d"(c), "r"(r10), "r"(r8), "r"(r9)
                     : "rcx", "r11", "memory");
    if (sandboxing)
        after_sandbox(r);
    if ((unsigned long)r >= (unsigned long)-4095) {
        errno = (int)-r;
        return -1;
    }
    return r;
}
#endif

int hp_prctl(int option, unsigned long a, unsigned long b, unsigned long c, unsigned long d)
{
    int (*f)(int, ...) = NEXT(real_prctl, "prctl", int (*)(int, ...));
    int sandboxing = prctl_installs(option, a);
    if (sandboxing)
        before_sandbox();
    int r = f ? f(option, a, b, c, d) : MISSING();
    if (sandboxing)
        after_sandbox(r);
    return r;
}
