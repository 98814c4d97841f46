/* The shim's tiny libc: string helpers, number formatting and error output through write(2),
 * usable on the malloc path because none of it allocates or takes a lock. */
#ifndef HP_UTIL_H
#define HP_UTIL_H

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#define HP_LIKELY(x) __builtin_expect(!!(x), 1)
#define HP_UNLIKELY(x) __builtin_expect(!!(x), 0)
/* Rare paths out of the way: kept out of line, away from the hot code (smaller i-cache
 * footprint of the malloc path; profiled programs feel it in their own code). */
#define HP_COLD __attribute__((cold, noinline))
/* The allocation and free paths: placed together (.text.hot), so the few kilobytes of code the
 * program runs on every allocation share a few pages and cache sets instead of lying spread
 * over the library's 70 KiB. */
#define HP_HOT __attribute__((hot))
#define HP_INTERNAL __attribute__((visibility("hidden")))
#define HP_EXPORT __attribute__((visibility("default")))
#define HP_CACHELINE 64

size_t hp_strlen(const char *s);
int hp_strcmp(const char *a, const char *b);
int hp_strncmp(const char *a, const char *b, size_t n);
/* Copy at most cap-1 bytes and NUL-terminate; returns strlen(src). */
size_t hp_strlcpy(char *dst, const char *src, size_t cap);
void *hp_memcpy(void *dst, const void *src, size_t n);
void *hp_memset(void *dst, int c, size_t n);
int hp_memcmp(const void *a, const void *b, size_t n);
/* Parse a decimal number with optional k/m/g suffix; 0 on success. */
int hp_parse_u64(const char *s, size_t len, uint64_t *out);

/* vsnprintf subset: %s %c %d %u %x %p %% with l/ll/z length modifiers. Always NUL-terminates;
 * returns the length written (truncated to cap-1). */
size_t hp_vfmt(char *buf, size_t cap, const char *fmt, va_list ap);
size_t hp_fmt(char *buf, size_t cap, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

/* The soft limit of resource (RLIMIT_*) for this process: UINT64_MAX when unlimited or
 * unknown. Keeps errno. */
uint64_t hp_soft_limit(int resource);

/* Write all of buf to fd, retrying on EINTR and short writes; keeps errno. */
void hp_write_all(int fd, const void *buf, size_t len);
/* The same for a message: to a pipe or socket whose reader has gone (`cmd 2>&1 | head`), the
 * write fails instead of raising SIGPIPE, which would end the program (hp_sig_guard). */
void hp_write_msg(int fd, const void *buf, size_t len);

/* Keep a signal the shim's own system calls may raise in the calling thread (SIGPIPE on a
 * broken pipe, SIGXFSZ past RLIMIT_FSIZE) from reaching the program: blocked from begin to
 * end, and taken back at end if it became pending meanwhile (a signal pending before is the
 * program's and stays). Nothing is done under a seccomp filter (hp_filtered), which may
 * punish the extra calls. */
struct hp_sig_guard {
    int on, pending_before;
    uint64_t bit, old_mask;
};
void hp_sig_guard_begin(struct hp_sig_guard *g, int sig);
void hp_sig_guard_end(const struct hp_sig_guard *g);

/* "heapprof: <message>\n" on stderr. hp_warn only when verbosity >= 1, hp_info when >= 2.
 * Nothing is written when descriptor 2 has become a regular file the program opened for
 * anything but appending (hp_log_fd_fit): its data, not a log. hp_log_init records the
 * stderr the process started with, which is always fit. hp_info's notes go to the descriptor
 * the log_fd option names instead, and only while it is still the file named there
 * (hp_note_fd: the descriptor, -1 without the option, -2 when the note is to be dropped). */
void hp_log_init(void);
int hp_log_fd_fit(void);
int hp_note_fd(void);
void hp_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void hp_warn(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void hp_info(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* The address of function `name` in the kernel's vDSO (the ELF image the kernel maps into
 * every process, found through the auxiliary vector), NULL without one or without the symbol.
 * Reads memory only: safe from the first malloc on. */
void *hp_vdso_sym(const char *name);

/* The next definition of name after the shim's (glibc's), looked up once into *slot. */
/* The process put itself under a seccomp filter (creds.c), which may refuse or punish any
 * system call it did not expect. From then on the shim's own calls are only those the
 * allocator itself needs: no reads of /proc, no mincore, no new files; the exit profile goes
 * into the file made just before, by write(2) alone (dump.c). Stays set in forked children,
 * which keep the filter. */
extern int hp_sandboxed;
/* A filter is being installed (from before its provisional profile until the request
 * returned): the interval-dump thread then makes no system call (dump.c). */
extern int hp_sandboxing;
/* The process runs under a seccomp filter: one it installed (hp_sandboxed) or one it started
 * under (inherited across exec, as systemd's SystemCallFilter= and man-db's children are),
 * which the shim learns at start from /proc/self/status. Such a filter lists what the program
 * itself calls; the shim then keeps away from calls a program seldom makes where it can do
 * without them (mincore for the metadata's resident size, for foreign page-start frees and in
 * libunwind; copy_file_range), since an unlisted call may kill the process. */
extern int hp_filtered;
/* The process's seccomp mode from /proc/self/status: 0 none, 1 strict, 2 filter; -1 unknown. */
int hp_seccomp_mode(void);
void *hp_next_fn(void **slot, const char *name);

static inline uint64_t hp_mix64(uint64_t x)
{
    /* A bijective 64-bit mixer (splitmix finaliser constants). */
    x ^= x >> 30;
    x *= 0xbf58476d1ce4e5b9ULL;
    x ^= x >> 27;
    x *= 0x94d049bb133111ebULL;
    x ^= x >> 31;
    return x;
}

static inline int hp_is_pow2(uint64_t x) { return x && !(x & (x - 1)); }

/* Smallest power of two >= x; 2^63 for anything larger. */
static inline uint64_t hp_round_pow2(uint64_t x)
{
    uint64_t r = 1;
    while (r < x && r < ((uint64_t)1 << 63))
        r <<= 1;
    return r;
}

/* Raw syscalls used where libc wrappers could be interposed or take locks. */
long hp_sys_open(const char *path, int flags, int mode);
/* A descriptor the shim (or a library it loaded) made, moved to a high free number: fd itself
 * when it cannot be moved. Close-on-exec. errno is kept. */
long hp_fd_high(long fd);
/* Grow the descriptor table up to where hp_fd_high puts descriptors, once per process, while it
 * has one thread (before pthread_create): later moves then never wait for the kernel. */
void hp_fd_table_grow(void);
/* Sleep about ns nanoseconds (under a second). Not libc's nanosleep: that is a cancellation
 * point, and a thread cancelled while it waits inside the shim would die holding the shim's
 * locks (its thread cache's among them: every later dump, fork and its own exit would then
 * wait forever). errno is kept. */
void hp_sleep_ns(long ns);
/* /proc/self/NAME, opened for reading. After a chroot (creds.c keeps a descriptor of /proc
 * from before it) through that descriptor, as /proc is usually not inside the new root. */
extern int hp_proc_fd;
long hp_open_proc_self(const char *name);
/* Up to cap bytes of /proc/self/NAME into buf; how many, or -1 when it cannot be opened. */
long hp_read_proc_self(const char *name, char *buf, size_t cap);
#endif
