/* Changes of credentials and of the root directory. A server started as root that hands its
 * work to processes running as another user (nginx's workers become nobody) makes them write
 * their profiles at exit, when they may no longer create a file where the user asked (the
 * current directory, owned by root): their profiles were lost. So before such a change the
 * shim makes the profile file, with a provisional profile in it (complete, should the
 * process exec or be killed without another dump), and keeps it open; the exit profile
 * replaces it through that descriptor. Same for chroot, after which the path means another
 * file. Each function then goes to glibc's. */
#include "hp.h"

#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <sys/types.h>
#include <unistd.h>

static void *real_setuid, *real_setgid, *real_seteuid, *real_setegid, *real_setreuid,
    *real_setregid, *real_setresuid, *real_setresgid, *real_setgroups, *real_chroot;

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

#define NEXT(slot, name, type) ((type)hp_next_fn(&(slot), name))
#define MISSING() (errno = ENOSYS, -1)

HP_EXPORT int setuid(uid_t uid)
{
    int (*f)(uid_t) = NEXT(real_setuid, "setuid", int (*)(uid_t));
    before(uid_change(uid, uid, (uid_t)-1));
    return f ? f(uid) : MISSING();
}

HP_EXPORT int seteuid(uid_t uid)
{
    int (*f)(uid_t) = NEXT(real_seteuid, "seteuid", int (*)(uid_t));
    before(uid_change((uid_t)-1, uid, (uid_t)-1));
    return f ? f(uid) : MISSING();
}

HP_EXPORT int setreuid(uid_t r, uid_t e)
{
    int (*f)(uid_t, uid_t) = NEXT(real_setreuid, "setreuid", int (*)(uid_t, uid_t));
    before(uid_change(r, e, (uid_t)-1));
    return f ? f(r, e) : MISSING();
}

HP_EXPORT int setresuid(uid_t r, uid_t e, uid_t s)
{
    int (*f)(uid_t, uid_t, uid_t) = NEXT(real_setresuid, "setresuid", int (*)(uid_t, uid_t, uid_t));
    before(uid_change(r, e, s));
    return f ? f(r, e, s) : MISSING();
}

/* Group changes matter only to a privileged process (others cannot make them). */
HP_EXPORT int setgid(gid_t gid)
{
    int (*f)(gid_t) = NEXT(real_setgid, "setgid", int (*)(gid_t));
    before(geteuid() == 0);
    return f ? f(gid) : MISSING();
}

HP_EXPORT int setegid(gid_t gid)
{
    int (*f)(gid_t) = NEXT(real_setegid, "setegid", int (*)(gid_t));
    before(geteuid() == 0);
    return f ? f(gid) : MISSING();
}

HP_EXPORT int setregid(gid_t r, gid_t e)
{
    int (*f)(gid_t, gid_t) = NEXT(real_setregid, "setregid", int (*)(gid_t, gid_t));
    before(geteuid() == 0);
    return f ? f(r, e) : MISSING();
}

HP_EXPORT int setresgid(gid_t r, gid_t e, gid_t s)
{
    int (*f)(gid_t, gid_t, gid_t) = NEXT(real_setresgid, "setresgid", int (*)(gid_t, gid_t, gid_t));
    before(geteuid() == 0);
    return f ? f(r, e, s) : MISSING();
}

HP_EXPORT int setgroups(size_t n, const gid_t *list)
{
    int (*f)(size_t, const gid_t *) = NEXT(real_setgroups, "setgroups", int (*)(size_t, const gid_t *));
    before(geteuid() == 0);
    return f ? f(n, list) : MISSING();
}

HP_EXPORT int chroot(const char *path)
{
    int (*f)(const char *) = NEXT(real_chroot, "chroot", int (*)(const char *));
    before(geteuid() == 0);
    /* The memory map and command line are read from /proc at every dump. */
    if (hp_proc_fd < 0 && hp_profiling)
        hp_proc_fd = (int)hp_sys_open("/proc", O_PATH | O_DIRECTORY | O_CLOEXEC, 0);
    return f ? f(path) : MISSING();
}
