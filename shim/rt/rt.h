/* shim/rt: the shim's own runtime, which depends on no other part of the shim: strings, number
 * formatting and logging through write(2), locks, descriptors, /proc and the vDSO, the metadata
 * arena, /proc/self/maps, options, the clock, and the per-thread re-entrancy state. Nothing here
 * allocates from the program's heap or takes a libc lock, so all of it is usable on the malloc
 * path and in signal handlers. */
#ifndef HP_RT_H
#define HP_RT_H

#include <sched.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <time.h>

/* ---- compiler hints and visibility ---- */
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

/* ---- strings and memory (string.c) ---- */
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

/* ---- formatting (fmt.c) ---- */
/* vsnprintf subset: %s %c %d %u %x %p %% with l/ll/z length modifiers. Always NUL-terminates;
 * returns the length written (truncated to cap-1). */
size_t hp_vfmt(char *buf, size_t cap, const char *fmt, va_list ap);
size_t hp_fmt(char *buf, size_t cap, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

/* ---- descriptors and limits (fd.c) ---- */
/* The soft limit of resource (RLIMIT_*) for this process: UINT64_MAX when unlimited or
 * unknown. Keeps errno. */
uint64_t hp_soft_limit(int resource);

/* Write all of buf to fd, retrying on EINTR and short writes; keeps errno. */
void hp_write_all(int fd, const void *buf, size_t len);
/* The same for a message: to a pipe or socket whose reader has gone (`cmd 2>&1 | head`), the
 * write fails instead of raising SIGPIPE, which would end the program (hp_sig_guard). */
void hp_write_msg(int fd, const void *buf, size_t len);

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

/* ---- messages (log.c) ---- */
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

/* ---- the vDSO (vdso.c) ---- */
/* The address of function `name` in the kernel's vDSO (the ELF image the kernel maps into
 * every process, found through the auxiliary vector), NULL without one or without the symbol.
 * Reads memory only: safe from the first malloc on. */
void *hp_vdso_sym(const char *name);

/* ---- /proc/self and the seccomp state (proc.c) ---- */
/* The process put itself under a seccomp filter (core/), which may refuse or punish any
 * system call it did not expect. From then on the shim's own calls are only those the
 * allocator itself needs: no reads of /proc, no mincore, no new files; the exit profile goes
 * into the file made just before, by write(2) alone (dump/). Stays set in forked children,
 * which keep the filter. */
extern int hp_sandboxed;
/* A filter is being installed (from before its provisional profile until the request
 * returned): the interval-dump thread then makes no system call (dump/). */
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
/* /proc/self/NAME, opened for reading. After a chroot (creds.c keeps a descriptor of /proc
 * from before it) through that descriptor, as /proc is usually not inside the new root. */
extern int hp_proc_fd;
long hp_open_proc_self(const char *name);
/* Up to cap bytes of /proc/self/NAME into buf; how many, or -1 when it cannot be opened. */
long hp_read_proc_self(const char *name, char *buf, size_t cap);

/* ---- arithmetic ---- */
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

/* ---- locks (lock.c) ---- */
/* A small test-and-test-and-set spinlock for the shim's short critical sections; it never
 * allocates and yields the cpu when contended, so it is safe on the malloc path. */
typedef struct {
    volatile int v;
} hp_lock_t;

#define HP_LOCK_INIT {0}

static inline void hp_cpu_relax(void)
{
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#elif defined(__aarch64__)
    __asm__ volatile("yield");
#endif
}

static inline int hp_trylock(hp_lock_t *l)
{
    return __atomic_load_n(&l->v, __ATOMIC_RELAXED) == 0 &&
           __atomic_exchange_n(&l->v, 1, __ATOMIC_ACQUIRE) == 0;
}

/* Set when the process is crashing (a fault or abort): its memory, the shim's locks included,
 * may be damaged, and a lock that stays taken for about a second is then taken anyway, so
 * the profile written on the way down can never turn the crash into a hang. */
extern volatile int hp_crashing;

/* The contended case, out of line (util.c): the inlined part stays two instructions. */
void hp_lock_slow(hp_lock_t *l);

static inline void hp_lock(hp_lock_t *l)
{
    if (__builtin_expect(!hp_trylock(l), 0))
        hp_lock_slow(l);
}

static inline void hp_unlock(hp_lock_t *l) { __atomic_store_n(&l->v, 0, __ATOMIC_RELEASE); }

/* Only for the child after fork, where the owner of a held lock no longer exists. */
static inline void hp_lock_reset(hp_lock_t *l) { __atomic_store_n(&l->v, 0, __ATOMIC_RELAXED); }

/* An owner lock: one thread, the owner, takes it on nearly every event; other threads take it
 * seldom (a dump's flush, a fork). A plain lock costs the owner an atomic exchange each time,
 * which on x86 waits for every store before it to leave the store buffer: 1.5-4% of python3's
 * time under the shim (bench/ab.sh, three measurements; the kept lock gained 3%). Here the
 * owner only stores busy = 1 and reads held (a Dekker handshake with the store-load fence
 * left out); another thread takes held with an atomic exchange, then makes every thread of
 * the process pass a full fence (hp_olock_barrier: membarrier(2)) before it reads busy.
 * After that fence either the owner's busy = 1 is visible to it, or the owner's read of held
 * comes after the fence and sees the claim. When the barrier is not available
 * (hp_olock_asym == 0: an old kernel, a seccomp filter) the lock is symmetric (sym): the
 * owner takes held with an exchange as well, a plain lock. The owner reads held and the mode
 * in one 16-bit load (gate): with the mode in a global, or in a byte of its own read apart,
 * bench/alloc_bench with two threads ran 15% slower (three builds, measured three times each;
 * a load more right after the owner's store, not understood further).
 * With the fields in one 32-bit word, the lock has the size of an hp_lock_t. */
typedef struct {
    union {
        struct {
            volatile unsigned char held; /* taken by another thread, or by the owner on its slow path */
            volatile unsigned char sym;  /* 1: the owner takes held too (hp_olock_prepare) */
        };
        volatile unsigned short gate; /* both: the owner's fast path reads them at once */
    };
    volatile unsigned char busy; /* the owner is inside, on its fast path */
    unsigned char spare;
} hp_olock_t;

/* 1 while owners may take their locks without an atomic instruction (util.c): what
 * hp_olock_prepare gives a lock, and whether takers need the barrier. */
extern int hp_olock_asym;

/* A lock made (or handed to a new owner): symmetric unless the barrier is available. The caller
 * keeps hp_olock_symmetric from running meanwhile. */
static inline void hp_olock_prepare(hp_olock_t *l)
{
    __atomic_store_n(&l->sym, !__atomic_load_n(&hp_olock_asym, __ATOMIC_SEQ_CST), __ATOMIC_SEQ_CST);
}

void hp_olock_own_slow(hp_olock_t *l);

/* The owner takes its lock. Returns what hp_olock_disown needs: 1 for the fast path. */
static inline int hp_olock_own(hp_olock_t *l)
{
    __atomic_store_n(&l->busy, 1, __ATOMIC_RELAXED);
    /* Only the compiler is kept from moving the reads above the store: the processor may,
     * which is what the other side's barrier is for. */
    __atomic_signal_fence(__ATOMIC_SEQ_CST);
    if (__builtin_expect(!__atomic_load_n(&l->gate, __ATOMIC_ACQUIRE), 1))
        return 1;
    __atomic_store_n(&l->busy, 0, __ATOMIC_RELEASE);
    hp_olock_own_slow(l);
    return 0;
}

static inline void hp_olock_disown(hp_olock_t *l, int fast)
{
    if (fast)
        __atomic_store_n(&l->busy, 0, __ATOMIC_RELEASE);
    else
        __atomic_store_n(&l->held, 0, __ATOMIC_RELEASE);
}

/* Another thread takes an owner's lock in three steps, so that taking many costs one barrier:
 * hp_olock_claim on each, hp_olock_barrier once, hp_olock_wait on each. hp_olock_take does
 * the three for one lock. */
void hp_olock_claim(hp_olock_t *l);
void hp_olock_barrier(void);
void hp_olock_wait(hp_olock_t *l);

static inline void hp_olock_take(hp_olock_t *l)
{
    hp_olock_claim(l);
    hp_olock_barrier();
    hp_olock_wait(l);
}

static inline void hp_olock_release(hp_olock_t *l) { __atomic_store_n(&l->held, 0, __ATOMIC_RELEASE); }

/* The child after fork (the mode stays). */
static inline void hp_olock_reset(hp_olock_t *l)
{
    __atomic_store_n(&l->held, 0, __ATOMIC_RELAXED);
    __atomic_store_n(&l->busy, 0, __ATOMIC_RELAXED);
}

/* At init: owners go without an atomic instruction if the kernel offers the barrier
 * (membarrier's private expedited command, registered here) and no seccomp filter is on. */
void hp_olock_init(void);
/* From now on owners take their locks with an exchange (before a seccomp filter is installed:
 * it may refuse membarrier, or kill the process for it): hp_olock_set_symmetric on every lock
 * there is, then hp_olock_symmetric. The caller keeps other threads from taking owner locks,
 * and from preparing new ones, meanwhile. */
static inline void hp_olock_set_symmetric(hp_olock_t *l) { __atomic_store_n(&l->sym, 1, __ATOMIC_SEQ_CST); }
void hp_olock_symmetric(void);

/* ---- the metadata arena (meta.c) ---- */
/* The shim's metadata arena: memory for stacks, tables and thread state comes from mmap under
 * a budget (metadata_budget_mb), never from the user's heap. Blocks are cache-line aligned and
 * zeroed; they are never freed (metadata lives as long as the process). */

void hp_meta_init(uint64_t budget_bytes);
/* Zeroed, 64-byte aligned; NULL when the budget or the kernel says no. */
void *hp_meta_alloc(size_t size);
/* The same for a signal handler that may have interrupted this thread inside the arena: gives
 * up (NULL) rather than wait long for the lock, and takes no size beyond a quarter chunk. */
void *hp_meta_alloc_nested(size_t size);
/* Large zeroed region of its own mapping (tables), counted against the budget. */
void *hp_meta_map(size_t size);
/* The errno of the last mmap the arena could not make (0: none failed; a NULL from the
 * functions above is then the budget). */
extern int hp_meta_map_errno;
uint64_t hp_meta_used(void);
/* Bytes of the arena's mappings in memory now (mincore): what the metadata costs in RSS. */
uint64_t hp_meta_resident(void);
uint64_t hp_meta_budget(void);
void hp_meta_fork_prepare(void);
void hp_meta_fork_parent(void);
void hp_meta_fork_child(void);

/* ---- /proc/self/maps (maps.c) ---- */
/* Reading /proc/self/maps with raw system calls (no stdio, no allocation), for the executable
 * ranges the frame-pointer unwinder trusts and for the module list written into profiles. */

struct hp_mapping {
    uint64_t start, end, offset;
    uint32_t prot; /* 1 r, 2 w, 4 x */
    const char *path; /* NUL-terminated, valid only during the callback; "" if anonymous */
};

/* Calls fn for each line; returns 0 on success, -1 if the file cannot be read. Async-signal-
 * safe: only open/read/close. */
int hp_maps_foreach(int (*fn)(const struct hp_mapping *, void *), void *arg);

/* Parse one maps line (without the newline) into m; path points into line. 0 on success. */
int hp_maps_parse_line(char *line, struct hp_mapping *m);

/* In a forked child: the lock may have been held by a thread that no longer exists. */
void hp_maps_fork_child(void);

/* ---- options (options.c, the table in options.def) ---- */
/* Parsed HEAPPROF_OPTIONS, read once at init from one X-macro table (options.def). */

#define HP_OPT_STR_MAX 256

struct hp_options {
#define HP_OPTION_BOOL(name) int name;
#define HP_OPTION_INT(name) uint64_t name;
#define HP_OPTION_SIG(name) uint64_t name;
#define HP_OPTION_STR(name) char name[HP_OPT_STR_MAX];
#define HP_OPTION(kind, name, def, doc) HP_OPTION_##kind(name)
#include "rt/options.def"
#undef HP_OPTION
#undef HP_OPTION_BOOL
#undef HP_OPTION_INT
#undef HP_OPTION_SIG
#undef HP_OPTION_STR
};

extern struct hp_options hp_opt;

/* Reset to defaults, then apply `spec` ("k=v:k=v", may be NULL). Unknown keys and bad values
 * warn through hp_warn and leave the default. Returns the number of problems found. */
int hp_options_parse(struct hp_options *o, const char *spec);
/* Write the table with current values to fd. */
void hp_options_print(const struct hp_options *o, int fd);

/* ---- per-thread state (tls.c) ---- */
struct hp_thread;
struct hp_tls {
    int depth;                 /* >0 while inside the shim: nested calls are re-entrant;
                                * HP_DEPTH_EVENT inside an allocation's or free's own work */
    int dead;                  /* the thread's destructor ran: no cache any more */
    struct hp_thread *thread;  /* profiling state, NULL until the first profiled call */
    uintptr_t stack_lo, stack_hi; /* this thread's own stack (hi 0: not computed yet) */
    unsigned boot_calls;       /* allocations served by the bootstrap arena (init probes) */
    int in_libunwind;          /* inside a libunwind capture (stack.c, fork) */
};
extern __thread struct hp_tls hp_tls __attribute__((tls_model("initial-exec")));
/* The depth of an allocation or free being recorded (profile.c), where everything else that
 * enters the shim counts from 0 up: a call that finds exactly this depth was made by a signal
 * handler that interrupted the recording (and is recorded itself, profile.c); one that finds
 * any other non-zero depth was made by the shim's own work (loading libunwind, a dump) or
 * during it, and is not. */
#define HP_DEPTH_EVENT (1 << 20)

/* ---- the clock and cpu id used in headers and HIBs (clock.c) ---- */
void hp_clock_init(void);
extern int (*hp_vdso_gettime)(clockid_t, struct timespec *); /* NULL: no vDSO (valgrind) */
extern uint64_t hp_clock_start_ms;
/* Whole ms of the coarse clock since the shim started (the clock ticks every 1 to 4 ms): a
 * 32-bit division of the nanoseconds, not a 64-bit one of the whole time. Straight into the
 * vDSO when there is one: libc's clock_gettime only checks and forwards to it. Inline: it runs
 * twice per block. */
static inline uint32_t hp_now_ms(void)
{
    struct timespec ts;
    int (*vdso)(clockid_t, struct timespec *) = hp_vdso_gettime;
    if (HP_UNLIKELY(vdso == NULL) || HP_UNLIKELY(vdso(CLOCK_MONOTONIC_COARSE, &ts) != 0))
        clock_gettime(CLOCK_MONOTONIC_COARSE, &ts);
    return (uint32_t)((uint64_t)ts.tv_sec * 1000u + (uint32_t)ts.tv_nsec / 1000000u -
                      hp_clock_start_ms);
}
uint32_t hp_cpu_slow(void);
/* The cpu this thread runs on: read from the thread's rseq area, which the kernel keeps up to
 * date and glibc (2.35+) registers, so it costs one load; sched_getcpu() otherwise. */
extern int hp_rseq_ok;
extern ptrdiff_t hp_rseq_cpu_off;
static inline uint32_t hp_cpu(void)
{
#if defined(__x86_64__)
    if (HP_LIKELY(hp_rseq_ok)) {
        uintptr_t tp;
        __asm__("mov %%fs:0, %0" : "=r"(tp));
        int32_t c = *(volatile const int32_t *)(tp + (uintptr_t)hp_rseq_cpu_off);
        if (HP_LIKELY(c >= 0))
            return (uint32_t)c;
    }
#endif
    return hp_cpu_slow();
}
uint64_t hp_start_unix_ns(void);

/* ---- work left for the way out of the shim (tls.c) ---- */
/* A dump a signal handler (or the profiler, at a new peak) asked for while this thread was
 * inside the shim, whose locks it may hold: the reason, written by the thread that leaves the
 * shim last (hp_leave). dump/ registers the function that writes it (hp_pending_runner). */
extern volatile int hp_dump_pending;
extern void (*volatile hp_pending_runner)(void);
/* Run the pending work now (through hp_pending_runner): the caller is out of the shim. */
void hp_run_pending(void);
/* Leaving the shim: a signal that arrived meanwhile may have left a dump, or a kill, to do. */
static inline void hp_leave(void)
{
    if (--hp_tls.depth == 0 && __builtin_expect(hp_dump_pending != 0, 0))
        hp_run_pending();
}

#endif
