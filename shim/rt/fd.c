/* The shim's own descriptors (rt.h): opened with raw system calls past RLIMIT_NOFILE when the
 * program holds every one it may, and moved up out of the numbers the program's next open()
 * expects; writing whole buffers; sleeping outside libc's cancellation points. */
#include "rt/rt.h"

#include <errno.h>
#include <fcntl.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

void hp_write_all(int fd, const void *buf, size_t len)
{
    int saved = errno;
    const char *p = buf;
    while (len) {
        long r = syscall(SYS_write, fd, p, len);
        if (r < 0) {
            if (errno == EINTR)
                continue;
            break;
        }
        p += r;
        len -= (size_t)r;
    }
    errno = saved;
}

/* A descriptor the shim opened, moved at once to a high free number (from 1000, or three
 * quarters of a smaller soft limit), so the program's next open() gets the number it would get
 * without the shim: the spool file and the kept profile stay open for the whole run, and a
 * program that closes 0, 1 or 2 and opens a file expects that file there. Not under a seccomp
 * filter the program installed (it may kill on fcntl). errno is kept. */
#define FD_HIGH_MIN 1000

static long fd_high_min(void)
{
    uint64_t nofile = hp_soft_limit(RLIMIT_NOFILE);
    return nofile / 4 * 3 < FD_HIGH_MIN ? (long)(nofile / 4 * 3) : FD_HIGH_MIN;
}

long hp_fd_high(long fd)
{
    if (fd < 0 || fd >= FD_HIGH_MIN || __atomic_load_n(&hp_sandboxed, __ATOMIC_RELAXED))
        return fd;
    int saved = errno;
    long min = fd_high_min();
    if (min > fd + 1) { /* else already as high as it would go */
        long high = syscall(SYS_fcntl, (int)fd, F_DUPFD_CLOEXEC, (int)min);
        if (high >= 0) {
            syscall(SYS_close, (int)fd);
            fd = high;
        }
    }
    errno = saved;
    return fd;
}

/* The first descriptor moved up grows the process's descriptor table to that number. Threads
 * share the table, and with more than one the kernel waits for an RCU grace period before it
 * lets the old table go: 14 ms on this guest, paid by every forked child that started a thread
 * and then read its memory map (a program forking 100 times while its threads allocate ran
 * 4x slower). So the table is grown while the process still has one thread: before each
 * process's first pthread_create (a fork child's table is only as big as its open descriptors
 * need). A descriptor of "/" opened for the moment is copied up and both are closed (not one
 * of the program's: closing a copy of it would drop the program's fcntl locks on its file). */
void hp_fd_table_grow(void)
{
    static int grown_pid;
    int pid = (int)syscall(SYS_getpid);
    /* Not under a seccomp filter the shim saw installed (no opens then). Under one the process
     * started under (a container's, or man's for col) it opens files as it does anyway. */
    if (__atomic_load_n(&grown_pid, __ATOMIC_RELAXED) == pid ||
        __atomic_load_n(&hp_sandboxed, __ATOMIC_RELAXED))
        return;
    int saved = errno;
    long fd = syscall(SYS_openat, AT_FDCWD, "/", O_PATH | O_DIRECTORY | O_CLOEXEC);
    if (fd >= 0) {
        long high = syscall(SYS_fcntl, (int)fd, F_DUPFD_CLOEXEC, (int)fd_high_min());
        if (high >= 0)
            syscall(SYS_close, (int)high);
        syscall(SYS_close, (int)fd);
    }
    __atomic_store_n(&grown_pid, pid, __ATOMIC_RELAXED);
    errno = saved;
}

void hp_sleep_ns(long ns)
{
    int saved = errno;
    struct timespec ts = {0, ns};
    syscall(SYS_nanosleep, &ts, NULL);
    errno = saved;
}

/* The program holds every descriptor its soft RLIMIT_NOFILE allows (a server at its limit, or
 * one that opened files until it could not; at exit, say): the shim's open (the profile, the
 * memory map, an object's build id) gets one above it, the soft limit raised towards the hard
 * one for that open only. The program keeps the limit it set; holding a descriptor of the
 * shim's below it from the start instead would have left the program one fewer. */
uint64_t hp_soft_limit(int resource)
{
    int saved = errno;
    struct rlimit rl;
    uint64_t lim = UINT64_MAX;
    if (syscall(SYS_prlimit64, 0, resource, NULL, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY)
        lim = (uint64_t)rl.rlim_cur;
    errno = saved;
    return lim;
}

static long open_past_nofile(const char *path, int flags, int mode)
{
    struct rlimit rl, raised;
    if (hp_filtered || syscall(SYS_prlimit64, 0, RLIMIT_NOFILE, NULL, &rl) != 0 ||
        rl.rlim_cur >= rl.rlim_max) {
        errno = EMFILE;
        return -1;
    }
    raised = rl;
    raised.rlim_cur = rl.rlim_max - rl.rlim_cur > 64 ? rl.rlim_cur + 64 : rl.rlim_max;
    if (syscall(SYS_prlimit64, 0, RLIMIT_NOFILE, &raised, NULL) != 0) {
        errno = EMFILE;
        return -1;
    }
    long fd = syscall(SYS_openat, AT_FDCWD, path, flags, mode);
    int e = errno;
    syscall(SYS_prlimit64, 0, RLIMIT_NOFILE, &rl, NULL);
    errno = e;
    return fd;
}

long hp_sys_open(const char *path, int flags, int mode)
{
    long fd = syscall(SYS_openat, AT_FDCWD, path, flags, mode);
    if (fd < 0 && errno == EMFILE)
        return open_past_nofile(path, flags, mode);
    return hp_fd_high(fd);
}
