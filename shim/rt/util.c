/* Implementation of the shim's tiny libc (see util.h), nothing of which allocates or takes a libc
 * lock, and the contended path of its own spinlock (lock.h). */
#include "rt/rt.h"

#include <dlfcn.h>
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <link.h>
#include <signal.h>
#include <sys/auxv.h>
#include <sys/stat.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

size_t hp_strlen(const char *s)
{
    size_t n = 0;
    while (s[n])
        n++;
    return n;
}

int hp_strcmp(const char *a, const char *b)
{
    while (*a && *a == *b)
        a++, b++;
    return (unsigned char)*a - (unsigned char)*b;
}

int hp_strncmp(const char *a, const char *b, size_t n)
{
    for (; n; n--, a++, b++) {
        if (*a != *b)
            return (unsigned char)*a - (unsigned char)*b;
        if (!*a)
            return 0;
    }
    return 0;
}

size_t hp_strlcpy(char *dst, const char *src, size_t cap)
{
    size_t n = hp_strlen(src);
    if (cap) {
        size_t c = n < cap - 1 ? n : cap - 1;
        hp_memcpy(dst, src, c);
        dst[c] = 0;
    }
    return n;
}

/* The shim's own memcpy and memset, for its metadata: libc's may be interposed (sanitizer
 * runtimes intercept them and, not seeing the shim's own synchronisation, report its metadata
 * as races; a program may define its own). Eight bytes at a time; GCC must not turn the loops
 * back into calls of the library functions (loop distribution). */
#if defined(__GNUC__) && !defined(__clang__)
#define HP_NO_LIBCALLS __attribute__((optimize("no-tree-loop-distribute-patterns")))
#else
#define HP_NO_LIBCALLS /* clang: -fno-builtin keeps its loop idioms from becoming calls */
#endif

HP_NO_LIBCALLS void *hp_memcpy(void *dst, const void *src, size_t n)
{
    unsigned char *d = dst;
    const unsigned char *s = src;
    for (; n >= 8; n -= 8, d += 8, s += 8) {
        uint64_t w;
        __builtin_memcpy(&w, s, 8); /* one unaligned load and store, even with -fno-builtin */
        __builtin_memcpy(d, &w, 8);
    }
    while (n--)
        *d++ = *s++;
    return dst;
}

HP_NO_LIBCALLS void *hp_memset(void *dst, int c, size_t n)
{
    unsigned char *d = dst;
    uint64_t w = 0x0101010101010101ull * (unsigned char)c;
    for (; n >= 8; n -= 8, d += 8)
        __builtin_memcpy(d, &w, 8);
    while (n--)
        *d++ = (unsigned char)c;
    return dst;
}

HP_NO_LIBCALLS int hp_memcmp(const void *a, const void *b, size_t n)
{
    const unsigned char *x = a, *y = b;
    for (; n; n--, x++, y++)
        if (*x != *y)
            return *x - *y;
    return 0;
}

int hp_parse_u64(const char *s, size_t len, uint64_t *out)
{
    uint64_t v = 0;
    size_t i = 0;
    if (len == 0)
        return -1;
    for (; i < len && s[i] >= '0' && s[i] <= '9'; i++) {
        uint64_t d = (uint64_t)(s[i] - '0');
        if (v > (UINT64_MAX - d) / 10)
            return -1;
        v = v * 10 + d;
    }
    if (i == 0)
        return -1;
    if (i < len) {
        unsigned shift;
        switch (s[i]) {
        case 'k': case 'K': shift = 10; break;
        case 'm': case 'M': shift = 20; break;
        case 'g': case 'G': shift = 30; break;
        default: return -1;
        }
        if (i + 1 != len || v > (UINT64_MAX >> shift))
            return -1;
        v <<= shift;
    }
    *out = v;
    return 0;
}

struct hp_out {
    char *buf;
    size_t cap, len;
};

static void out_c(struct hp_out *o, char c)
{
    if (o->len + 1 < o->cap)
        o->buf[o->len] = c;
    o->len++;
}

static void out_u(struct hp_out *o, unsigned long long v, unsigned base, int min_digits)
{
    char tmp[24];
    int n = 0;
    do {
        unsigned d = (unsigned)(v % base);
        tmp[n++] = (char)(d < 10 ? '0' + d : 'a' + d - 10);
        v /= base;
    } while (v);
    while (n < min_digits)
        tmp[n++] = '0';
    while (n)
        out_c(o, tmp[--n]);
}

size_t hp_vfmt(char *buf, size_t cap, const char *fmt, va_list ap)
{
    struct hp_out o = {buf, cap, 0};
    for (; *fmt; fmt++) {
        if (*fmt != '%') {
            out_c(&o, *fmt);
            continue;
        }
        fmt++;
        int lng = 0;
        while (*fmt == 'l' || *fmt == 'z') {
            lng++;
            fmt++;
        }
        switch (*fmt) {
        case 's': {
            const char *s = va_arg(ap, const char *);
            if (!s)
                s = "(null)";
            while (*s)
                out_c(&o, *s++);
            break;
        }
        case 'c':
            out_c(&o, (char)va_arg(ap, int));
            break;
        case 'd': {
            long long v = lng ? va_arg(ap, long long) : va_arg(ap, int);
            if (v < 0) {
                out_c(&o, '-');
                out_u(&o, (unsigned long long)0 - (unsigned long long)v, 10, 1);
            } else {
                out_u(&o, (unsigned long long)v, 10, 1);
            }
            break;
        }
        case 'u':
            out_u(&o, lng ? va_arg(ap, unsigned long long) : va_arg(ap, unsigned), 10, 1);
            break;
        case 'x':
            out_u(&o, lng ? va_arg(ap, unsigned long long) : va_arg(ap, unsigned), 16, 1);
            break;
        case 'p':
            out_c(&o, '0');
            out_c(&o, 'x');
            out_u(&o, (uintptr_t)va_arg(ap, void *), 16, 1);
            break;
        case '%':
            out_c(&o, '%');
            break;
        default:
            out_c(&o, '?');
            if (!*fmt)
                fmt--;
            break;
        }
    }
    if (cap)
        buf[o.len < cap ? o.len : cap - 1] = 0;
    return o.len < cap ? o.len : (cap ? cap - 1 : 0);
}

size_t hp_fmt(char *buf, size_t cap, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    size_t n = hp_vfmt(buf, cap, fmt, ap);
    va_end(ap);
    return n;
}

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

__attribute__((noinline, cold)) void hp_lock_slow(hp_lock_t *l)
{
    unsigned spins = 0;
    while (!hp_trylock(l)) {
        if (++spins < 64) {
            hp_cpu_relax();
        } else {
            sched_yield();
            if (__builtin_expect(hp_crashing, 0) && spins > 200000) {
                __atomic_store_n(&l->v, 1, __ATOMIC_SEQ_CST);
                return;
            }
        }
    }
}

/* ---------- owner locks (lock.h) ---------- */

int hp_olock_asym;

#ifndef MEMBARRIER_CMD_PRIVATE_EXPEDITED
#define MEMBARRIER_CMD_PRIVATE_EXPEDITED (1 << 3)
#define MEMBARRIER_CMD_REGISTER_PRIVATE_EXPEDITED (1 << 4)
#endif

void hp_olock_init(void)
{
    int saved = errno;
    /* Registering costs the kernel an RCU grace period when the process has several threads
     * already; at init it has one. */
    hp_olock_asym = !hp_filtered && syscall(SYS_membarrier, MEMBARRIER_CMD_REGISTER_PRIVATE_EXPEDITED, 0, 0) == 0;
    errno = saved;
}

/* A full fence on every cpu that runs a thread of the process, the caller's included, before
 * this returns. membarrier does it with an interrupt to each such cpu. The registration is
 * the address space's: a forked child keeps it (Linux 6.18; registered again here should a
 * kernel not), exec drops it (the new image's init registers). Should the call fail (a
 * seccomp filter installed without the shim seeing it), the same interrupts come from
 * shooting down a page's translation: a page the process wrote, made inaccessible, is flushed
 * from the TLB of every cpu that may hold it, by interrupting those cpus. Should that fail
 * too, a pause of a millisecond lets any store still buffered reach memory (on real
 * processors it does within far less). */
static void *tlb_page;

static int tlb_shootdown(void)
{
    if (!tlb_page) {
        void *p = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        if (p == MAP_FAILED)
            return -1;
        tlb_page = p;
    }
    if (mprotect(tlb_page, 4096, PROT_READ | PROT_WRITE) != 0)
        return -1;
    /* Present and dirty: a change of protection then has a translation to shoot down. */
    __atomic_fetch_add((volatile int *)tlb_page, 1, __ATOMIC_SEQ_CST);
    return mprotect(tlb_page, 4096, PROT_NONE);
}

static void full_barrier(void)
{
    int saved = errno;
    __atomic_thread_fence(__ATOMIC_SEQ_CST);
    int done = !hp_filtered && syscall(SYS_membarrier, MEMBARRIER_CMD_PRIVATE_EXPEDITED, 0, 0) == 0;
    if (!done && !hp_filtered) /* not registered (above) */
        done = syscall(SYS_membarrier, MEMBARRIER_CMD_REGISTER_PRIVATE_EXPEDITED, 0, 0) == 0 &&
               syscall(SYS_membarrier, MEMBARRIER_CMD_PRIVATE_EXPEDITED, 0, 0) == 0;
    if (!done)
        done = tlb_shootdown() == 0;
    if (!done)
        hp_sleep_ns(1000000);
    __atomic_thread_fence(__ATOMIC_SEQ_CST);
    errno = saved;
}

void hp_olock_barrier(void)
{
    if (__atomic_load_n(&hp_olock_asym, __ATOMIC_SEQ_CST))
        full_barrier();
}

void hp_olock_symmetric(void)
{
    if (!__atomic_load_n(&hp_olock_asym, __ATOMIC_SEQ_CST))
        return;
    __atomic_store_n(&hp_olock_asym, 0, __ATOMIC_SEQ_CST);
    /* After this every owner inside its lock the fast way has its busy flag visible (takers
     * wait for it to go), and every later one reads its lock's sym == 1 and takes the
     * exchange. */
    full_barrier();
}

/* Spin a little, then yield; when the process is crashing, give up after about a second (the
 * other side may be damaged or gone: see hp_crashing). Returns 1 to stop waiting. */
static inline int olock_pause(unsigned *spins)
{
    if (++*spins < 64) {
        hp_cpu_relax();
        return 0;
    }
    sched_yield();
    return __builtin_expect(hp_crashing, 0) && *spins > 200000;
}

/* held taken with an exchange, by an owner on its slow path or by another thread (the claim
 * must be visible before the barrier that follows it: sequentially consistent). */
void hp_olock_claim(hp_olock_t *l)
{
    unsigned spins = 0;
    while (!(__atomic_load_n(&l->held, __ATOMIC_RELAXED) == 0 &&
             __atomic_exchange_n(&l->held, 1, __ATOMIC_SEQ_CST) == 0))
        if (olock_pause(&spins)) {
            __atomic_store_n(&l->held, 1, __ATOMIC_SEQ_CST);
            return;
        }
}

__attribute__((noinline, cold)) void hp_olock_own_slow(hp_olock_t *l) { hp_olock_claim(l); }

void hp_olock_wait(hp_olock_t *l)
{
    unsigned spins = 0;
    while (__atomic_load_n(&l->busy, __ATOMIC_ACQUIRE))
        if (olock_pause(&spins))
            return;
}

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

/* The vDSO is a small complete ELF object in memory: its dynamic section names the symbol and
 * string tables, and its SysV hash table (which the kernel always builds) the symbol count.
 * Every address read is checked against the extent of its loadable segments. */
void *hp_vdso_sym(const char *name)
{
    uintptr_t base = (uintptr_t)getauxval(AT_SYSINFO_EHDR);
    if (!base)
        return NULL;
    const ElfW(Ehdr) *eh = (const ElfW(Ehdr) *)base;
    const unsigned char native_class = __ELF_NATIVE_CLASS == 64 ? ELFCLASS64 : ELFCLASS32;
    if (hp_memcmp(eh->e_ident, ELFMAG, SELFMAG) != 0 || eh->e_ident[EI_CLASS] != native_class ||
        eh->e_phentsize != sizeof(ElfW(Phdr)))
        return NULL;
    const ElfW(Phdr) *ph = (const ElfW(Phdr) *)(base + eh->e_phoff);
    uintptr_t bias = 0, end = 0;
    const ElfW(Dyn) *dyn = NULL;
    int have_load = 0;
    for (int i = 0; i < eh->e_phnum; i++) {
        if (ph[i].p_type == PT_LOAD && !have_load) {
            bias = base + ph[i].p_offset - ph[i].p_vaddr;
            end = base + ph[i].p_offset + ph[i].p_memsz;
            have_load = 1;
        } else if (ph[i].p_type == PT_DYNAMIC) {
            dyn = (const ElfW(Dyn) *)(base + ph[i].p_offset);
        }
    }
    if (!have_load || !dyn)
        return NULL;
#define HP_IN_VDSO(p, n) ((uintptr_t)(p) >= base && (uintptr_t)(p) + (n) <= end)
    const ElfW(Sym) *sym = NULL;
    const char *str = NULL;
    const uint32_t *hash = NULL;
    for (; HP_IN_VDSO(dyn, sizeof *dyn) && dyn->d_tag != DT_NULL; dyn++) {
        if (dyn->d_tag == DT_SYMTAB)
            sym = (const ElfW(Sym) *)(bias + dyn->d_un.d_ptr);
        else if (dyn->d_tag == DT_STRTAB)
            str = (const char *)(bias + dyn->d_un.d_ptr);
        else if (dyn->d_tag == DT_HASH)
            hash = (const uint32_t *)(bias + dyn->d_un.d_ptr);
    }
    if (!sym || !str || !hash || !HP_IN_VDSO(hash, 8))
        return NULL;
    uint32_t nsyms = hash[1]; /* nchain: one per symbol */
    size_t want = hp_strlen(name) + 1;
    for (uint32_t i = 0; i < nsyms && HP_IN_VDSO(&sym[i], sizeof sym[i]); i++) {
        const char *n = str + sym[i].st_name;
        if (ELF64_ST_TYPE(sym[i].st_info) != STT_FUNC || sym[i].st_shndx == SHN_UNDEF ||
            !HP_IN_VDSO(n, 1))
            continue;
        if ((uintptr_t)n + want <= end && hp_memcmp(n, name, want) == 0) {
            uintptr_t a = bias + sym[i].st_value;
            return HP_IN_VDSO(a, 1) ? (void *)a : NULL;
        }
    }
#undef HP_IN_VDSO
    return NULL;
}
