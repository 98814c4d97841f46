/* Messages (rt.h: hp_error, hp_warn, hp_info) through write(2), to a stderr that is still fit
 * for them, and the signal guard the shim's own writes run under. */
#include "rt/rt.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdarg.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

/* Descriptor 2 when the shim started. A daemon may close it and open a file of its own that
 * gets number 2 (a database, say): a message written there would damage that file. */
static uint64_t err_dev, err_ino;
static int err_known;

void hp_log_init(void)
{
    struct stat st;
    err_known = syscall(SYS_fstat, 2, &st) == 0;
    err_dev = err_known ? (uint64_t)st.st_dev : 0;
    err_ino = err_known ? (uint64_t)st.st_ino : 0;
}

int hp_log_fd_fit(void)
{
    struct stat st;
    if (syscall(SYS_fstat, 2, &st) != 0)
        return 0;
    if (err_known && (uint64_t)st.st_dev == err_dev && (uint64_t)st.st_ino == err_ino)
        return 1; /* the stderr the process was given */
    if (!S_ISREG(st.st_mode))
        return 1; /* a terminal, pipe, socket or /dev/null: a stream of messages */
    long fl = syscall(SYS_fcntl, 2, F_GETFL);
    return fl >= 0 && (fl & O_APPEND); /* a log: written by appending */
}

/* The descriptor notes (hp_info) go to instead of stderr: log_fd=FD,DEV,INO names one and the
 * file it must still be (heapprof-run passes a copy of its own stderr). -1 when the option is
 * not set; -2 when it is set but FD is no longer that file (closed, or reused by the program
 * for a file of its own): the note is then dropped, never written into the program's stderr,
 * which another program may be reading (a test comparing output, `cmd 2>&1 | parser`). */
int hp_note_fd(void)
{
    const char *s = hp_opt.log_fd;
    if (!s[0])
        return -1;
    uint64_t v[3];
    for (int i = 0; i < 3; i++) {
        size_t len = 0;
        while (s[len] && s[len] != ',')
            len++;
        if (hp_parse_u64(s, len, &v[i]) != 0 || (i < 2 && s[len] != ',') || (i == 2 && s[len]))
            return -2;
        s += len + (s[len] == ',');
    }
    struct stat st;
    if (v[0] > 1024 * 1024 || syscall(SYS_fstat, (int)v[0], &st) != 0 ||
        (uint64_t)st.st_dev != v[1] || (uint64_t)st.st_ino != v[2])
        return -2;
    return (int)v[0];
}

void hp_sig_guard_begin(struct hp_sig_guard *g, int sig)
{
    g->on = !hp_filtered;
    if (!g->on)
        return;
    int saved = errno;
    uint64_t pending = 0;
    g->bit = (uint64_t)1 << (sig - 1);
    g->old_mask = 0;
    syscall(SYS_rt_sigprocmask, SIG_BLOCK, &g->bit, &g->old_mask, sizeof g->bit);
    syscall(SYS_rt_sigpending, &pending, sizeof pending);
    g->pending_before = (pending & g->bit) != 0;
    errno = saved;
}

void hp_sig_guard_end(const struct hp_sig_guard *g)
{
    if (!g->on)
        return;
    int saved = errno;
    uint64_t pending = 0;
    if (!g->pending_before && syscall(SYS_rt_sigpending, &pending, sizeof pending) == 0 &&
        (pending & g->bit)) {
        struct timespec now = {0, 0};
        syscall(SYS_rt_sigtimedwait, &g->bit, NULL, &now, sizeof g->bit);
    }
    syscall(SYS_rt_sigprocmask, SIG_SETMASK, &g->old_mask, NULL, sizeof g->old_mask);
    errno = saved;
}

void hp_write_msg(int fd, const void *buf, size_t len)
{
    struct hp_sig_guard g;
    hp_sig_guard_begin(&g, SIGPIPE);
    hp_write_all(fd, buf, len);
    hp_sig_guard_end(&g);
}

static void vlog_to(int fd, const char *fmt, va_list ap)
{
    int saved = errno;
    if (fd == 2 && !hp_log_fd_fit()) {
        errno = saved;
        return;
    }
    char buf[512];
    size_t n = hp_fmt(buf, sizeof buf, "heapprof: ");
    n += hp_vfmt(buf + n, sizeof buf - n - 1, fmt, ap);
    buf[n++] = '\n';
    hp_write_msg(fd, buf, n);
    errno = saved;
}

/* Warnings and errors: to the notes' descriptor while it is still heapprof-run's stderr, so
 * that the program's own stderr stays the program's; to descriptor 2 otherwise (they are not
 * dropped as notes are: a profile that could not be written must be said somewhere). */
static void vlog(const char *fmt, va_list ap)
{
    int saved = errno;
    int fd = hp_note_fd();
    errno = saved;
    vlog_to(fd >= 0 ? fd : 2, fmt, ap);
}

void hp_error(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vlog(fmt, ap);
    va_end(ap);
}

void hp_warn(const char *fmt, ...)
{
    if (hp_opt.verbosity < 1)
        return;
    va_list ap;
    va_start(ap, fmt);
    vlog(fmt, ap);
    va_end(ap);
}

void hp_info(const char *fmt, ...)
{
    if (hp_opt.verbosity < 2)
        return;
    int saved = errno;
    int fd = hp_note_fd();
    errno = saved;
    if (fd == -2)
        return;
    va_list ap;
    va_start(ap, fmt);
    vlog_to(fd < 0 ? 2 : fd, fmt, ap);
    va_end(ap);
}
