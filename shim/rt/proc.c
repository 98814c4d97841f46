/* /proc/self files read with raw system calls (rt.h), and the seccomp state the shim keeps to
 * stay within what a filter allows. */
#include "rt/rt.h"

#include <errno.h>
#include <fcntl.h>
#include <sys/syscall.h>
#include <unistd.h>

int hp_proc_fd = -1;
int hp_sandboxed; /* set in creds.c */
int hp_sandboxing; /* likewise */
int hp_filtered;  /* set at init and in creds.c */

int hp_seccomp_mode(void)
{
    /* Static (a dump may ask on a small signal stack); a caller that finds it in use (a
     * signal handler's dump that interrupted another) hears "unknown" rather than wait. */
    static char buf[8192]; /* status is about 1.5 KiB */
    static hp_lock_t buf_lock = HP_LOCK_INIT;
    if (!hp_trylock(&buf_lock))
        return -1;
    long len = hp_read_proc_self("status", buf, sizeof buf - 1);
    if (len < 0) {
        hp_unlock(&buf_lock);
        return -1;
    }
    buf[len] = 0;
    static const char key[] = "Seccomp:";
    int mode = -1;
    for (const char *p = buf; *p; p++) {
        if ((p == buf || p[-1] == '\n') && hp_strncmp(p, key, sizeof key - 1) == 0) {
            p += sizeof key - 1;
            while (*p == ' ' || *p == '\t')
                p++;
            if (*p >= '0' && *p <= '2')
                mode = *p - '0';
            break;
        }
    }
    hp_unlock(&buf_lock);
    return mode;
}

long hp_open_proc_self(const char *name)
{
    char path[64];
    if (__atomic_load_n(&hp_sandboxed, __ATOMIC_RELAXED)) {
        errno = EACCES; /* under a seccomp filter the shim opens nothing */
        return -1;
    }
    if (hp_proc_fd >= 0) {
        hp_fmt(path, sizeof path, "self/%s", name);
        long fd = syscall(SYS_openat, hp_proc_fd, path, O_RDONLY | O_CLOEXEC);
        if (fd >= 0)
            return hp_fd_high(fd);
    }
    hp_fmt(path, sizeof path, "/proc/self/%s", name);
    return hp_sys_open(path, O_RDONLY | O_CLOEXEC, 0);
}

long hp_read_proc_self(const char *name, char *buf, size_t cap)
{
    int fd = (int)hp_open_proc_self(name);
    if (fd < 0)
        return -1;
    size_t have = 0;
    while (have < cap) {
        long r = syscall(SYS_read, fd, buf + have, cap - have);
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0)
            break;
        have += (size_t)r;
    }
    syscall(SYS_close, fd);
    return (long)have;
}
