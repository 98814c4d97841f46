/* Stack capture. The default walks frame pointers and trusts a frame only while it lies on this
 * thread's stack above the previous one and its return address is in an executable mapping
 * (Debian's libraries have no frame pointers: unchecked walks would hash garbage). The other
 * unwinder is libunwind, loaded privately (RTLD_LOCAL) because libunwind.so.8 also exports
 * _Unwind_* and backtrace, which must not replace libgcc's for the whole process. */
#include "unwind/unwind.h"
#include "rt/rt.h"
#include "backend/backend.h"

#include <dlfcn.h>
#include <errno.h>
#include <sys/auxv.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <pthread.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

extern void *__libc_stack_end;

struct range {
    uintptr_t start, end;
};

#define MAX_RANGES 8192

/* Two tables: readers use the published one while a refresh fills the other. Refreshes are at
 * least a second apart, far longer than any reader holds a table. */
static struct range tables[2][MAX_RANGES];
static struct range *exec_tab;
static int exec_n, cur_tab;
static hp_lock_t refresh_lock = HP_LOCK_INIT;
static uint32_t last_refresh_ms;
static uintptr_t shim_lo, shim_hi;
static int (*unw_backtrace_fn)(void **, int);
static uint32_t exec_gen = 1;

struct fill_state {
    struct range *t;
    int n;
    uintptr_t self;
};

static int fill_exec(const struct hp_mapping *m, void *arg)
{
    struct fill_state *s = arg;
    if (!(m->prot & 4) || s->n >= MAX_RANGES)
        return 0;
    s->t[s->n].start = m->start;
    s->t[s->n].end = m->end;
    s->n++;
    if (s->self >= m->start && s->self < m->end) {
        shim_lo = m->start;
        shim_hi = m->end;
    }
    return 0;
}

void hp_maps_refresh(int force)
{
    uint32_t now = hp_now_ms();
    if (!force && exec_tab && now - last_refresh_ms < 1000)
        return;
    if (!hp_trylock(&refresh_lock))
        return;
    int next = exec_tab ? !cur_tab : 0;
    struct fill_state s = {tables[next], 0, (uintptr_t)&hp_maps_refresh};
    if (hp_maps_foreach(fill_exec, &s) == 0 && s.n > 0) {
        __atomic_store_n(&exec_n, 0, __ATOMIC_RELEASE);
        __atomic_store_n(&exec_tab, s.t, __ATOMIC_RELEASE);
        __atomic_store_n(&exec_n, s.n, __ATOMIC_RELEASE);
        __atomic_add_fetch(&exec_gen, 1, __ATOMIC_RELEASE);
        cur_tab = next;
    }
    last_refresh_ms = now;
    hp_unlock(&refresh_lock);
}

/* The ranges this thread hit last, tagged with the table generation they came from. */
static __thread struct {
    uintptr_t start[2], end[2];
    uint32_t gen, next;
} hit_cache __attribute__((tls_model("initial-exec")));

/* The table range holding pc, or NULL. */
static const struct range *find_range(uintptr_t pc)
{
    int n = __atomic_load_n(&exec_n, __ATOMIC_ACQUIRE);
    const struct range *t = __atomic_load_n(&exec_tab, __ATOMIC_ACQUIRE);
    int l = 0, h = n - 1;
    while (l <= h) {
        int mid = (l + h) / 2;
        if (pc < t[mid].start)
            h = mid - 1;
        else if (pc >= t[mid].end)
            l = mid + 1;
        else
            return &t[mid];
    }
    return NULL;
}

/* Is pc in a range of the table? Say which: [*lo, *hi). The two ranges this thread hit last are
 * tried before the table's binary search. */
static int exec_lookup(uintptr_t pc, uintptr_t *lo, uintptr_t *hi)
{
    uint32_t gen = __atomic_load_n(&exec_gen, __ATOMIC_ACQUIRE);
    if (HP_LIKELY(hit_cache.gen == gen)) {
        for (int k = 0; k < 2; k++)
            if (pc >= hit_cache.start[k] && pc < hit_cache.end[k]) {
                *lo = hit_cache.start[k];
                *hi = hit_cache.end[k];
                return 1;
            }
    } else {
        hit_cache.start[0] = hit_cache.end[0] = hit_cache.start[1] = hit_cache.end[1] = 0;
        hit_cache.gen = gen;
    }
    const struct range *r = find_range(pc);
    if (!r)
        return 0;
    uint32_t k = hit_cache.next++ & 1;
    hit_cache.start[k] = *lo = r->start;
    hit_cache.end[k] = *hi = r->end;
    return 1;
}

/* In an object the loader knows, though not in the table: maybe one loaded since the table was
 * built. The loader's own lookup takes no lock and knows every object at once. */
static int in_loaded_object(uintptr_t pc)
{
#if defined(__x86_64__) || defined(__aarch64__)
    struct dl_find_object fo;
    return _dl_find_object((void *)pc, &fo) == 0;
#else
    (void)pc;
    return 0;
#endif
}

/* Like hp_is_exec, and say which range: [*lo, *hi). */
static int hp_exec_range(uintptr_t pc, uintptr_t *lo, uintptr_t *hi)
{
    if (exec_lookup(pc, lo, hi))
        return 1;
    if (in_loaded_object(pc)) {
        *lo = pc; /* a loaded object outside the table: no range to remember */
        *hi = pc + 1;
        return 1;
    }
    return 0;
}

int hp_is_exec(uintptr_t pc) { return hp_is_exec_mapping(pc) || in_loaded_object(pc); }

int hp_is_exec_mapping(uintptr_t pc)
{
    uintptr_t lo, hi;
    return exec_lookup(pc, &lo, &hi);
}

static uint64_t main_stack_limit;

struct find_map {
    uintptr_t addr, lo, hi;
};

static int find_map(const struct hp_mapping *m, void *arg)
{
    struct find_map *f = arg;
    if (f->addr < m->start || f->addr >= m->end)
        return 0;
    f->lo = m->start;
    f->hi = m->end;
    return 1;
}

static void own_stack_compute(uintptr_t *lo, uintptr_t *hi);

/* This thread's own stack, [lo, hi): computed once per thread. */
static inline void own_stack(uintptr_t *lo, uintptr_t *hi)
{
    if (HP_LIKELY(hp_tls.stack_hi)) {
        *lo = hp_tls.stack_lo;
        *hi = hp_tls.stack_hi;
        return;
    }
    own_stack_compute(lo, hi);
}

static void own_stack_compute(uintptr_t *lo, uintptr_t *hi)
{
    uintptr_t l = 0, h = 0;
    /* (Under a seccomp filter even gettid may be fatal; the main thread's bounds were found
     * before, at its first allocation.) */
    if (!hp_sandboxed && syscall(SYS_gettid) == getpid()) {
        h = (uintptr_t)__libc_stack_end; /* every frame of the main thread is below it */
        l = h > main_stack_limit ? h - main_stack_limit : 0;
    } else {
        /* Once per thread, from /proc/self/maps: the mapping that holds the thread's
         * descriptor, which glibc puts atop the thread's stack (its own or one the program
         * gave it). Not pthread_getattr_np: glibc allocates inside it while holding the
         * thread's lock, so asking it from here, under that very allocation, waits forever
         * (threads of the JVM and of Rust call it first thing). A thread glibc did not make:
         * the mapping this frame is on. */
        struct find_map f = {(uintptr_t)pthread_self(), 0, 0};
        if (hp_maps_foreach(find_map, &f) != 0 && hp_sandboxed) {
            /* Under a seccomp filter (no /proc): glibc's thread descriptor sits right above
             * the thread's stack, in the same mapping, so the stack below it is readable up
             * to it. A thread on another stack than that is walked as one (walk_limit_other). */
            f.lo = (uintptr_t)__builtin_frame_address(0) & ~(uintptr_t)4095;
            f.hi = f.addr > f.lo && f.addr - f.lo < ((uintptr_t)1 << 30) ? f.addr : 0;
        }
        if (!f.hi && !hp_sandboxed) {
            f.addr = (uintptr_t)__builtin_frame_address(0);
            hp_maps_foreach(find_map, &f);
        }
        l = f.lo;
        h = f.hi;
        if (!h)
            l = h = 1; /* nothing found: an empty range (computed all the same), so every
                        * walk of this thread takes the mincore path */
    }
    hp_tls.stack_lo = *lo = l;
    hp_tls.stack_hi = *hi = h;
}

/* Upper bound for reads during a walk starting at sp: the thread's stack top when sp is on the
 * thread's own stack (all of it above sp is mapped). Otherwise (an alternate signal stack, a
 * coroutine's stack) as much above sp as mincore says is mapped, up to 256 KiB. */
static uintptr_t walk_limit_other(uintptr_t sp);

static inline uintptr_t walk_limit(uintptr_t sp)
{
    uintptr_t lo, hi;
    own_stack(&lo, &hi);
    if (HP_LIKELY(sp >= lo && sp < hi))
        return hi;
    return walk_limit_other(sp);
}

static uintptr_t walk_limit_other(uintptr_t sp)
{
    uintptr_t page = sp & ~(uintptr_t)4095;
    static const unsigned pages[] = {64, 16, 4, 1};
    unsigned char vec[64];
    int saved = errno;
    uintptr_t limit = sp;
    /* No mincore under a filter the process installed (hp_sandboxed): sp's own page is
     * mapped. A filter it started under (hp_filtered) is most often a container's, which
     * allows mincore; walks on coroutine stacks keep their depth there. */
    if (__atomic_load_n(&hp_sandboxed, __ATOMIC_RELAXED))
        return page + 4096;
    for (unsigned i = 0; i < sizeof pages / sizeof pages[0]; i++)
        if (mincore((void *)page, (size_t)pages[i] * 4096, vec) == 0) {
            limit = page + (uintptr_t)pages[i] * 4096;
            break;
        }
    errno = saved;
    return limit;
}

static int in_shim(uintptr_t pc) { return pc >= shim_lo && pc < shim_hi; }

static int capture_fp(uintptr_t *pcs, int max, int *truncated, uintptr_t fp)
{
    uintptr_t lo = fp, hi = walk_limit(fp);
    uintptr_t code_lo = 0, code_hi = 0; /* the executable range the last frame was in */
    int n = 0, miss = 0;
    while (fp >= lo && fp < hi && hi - fp >= 2 * sizeof(uintptr_t) && !(fp & (sizeof(uintptr_t) - 1))) {
        uintptr_t next = ((uintptr_t *)fp)[0];
        uintptr_t ret = ((uintptr_t *)fp)[1];
        if (!in_shim(ret)) {
            if (ret - code_lo >= code_hi - code_lo) {
                if (!hp_exec_range(ret, &code_lo, &code_hi)) {
                    miss = 1;
                    break;
                }
            }
            if (n == max) {
                *truncated = 1;
                break;
            }
            pcs[n++] = ret;
        }
        if (next <= fp)
            break;
        fp = next;
    }
    /* A return address outside every known executable mapping may belong to a library loaded
     * since the last look at the maps. */
    if (miss && n == 0)
        hp_maps_refresh(0);
    return n;
}

/* Walk the shim's own frames (built with frame pointers) from fp to the first frame outside
 * it: its return address, and the stack pointer and frame register of the frame it returns to;
 * hi: the walk's upper bound. 0 if there is none. */
static inline int leave_shim(uintptr_t fp, uintptr_t *ret, uintptr_t *sp, uintptr_t *bp, uintptr_t *hi)
{
    uintptr_t lo = fp;
    *hi = walk_limit(fp);
    while (fp >= lo && fp < *hi && *hi - fp >= 2 * sizeof(uintptr_t) && !(fp & (sizeof(uintptr_t) - 1))) {
        uintptr_t next = ((uintptr_t *)fp)[0];
        *ret = ((uintptr_t *)fp)[1];
        if (!in_shim(*ret)) { /* the walk checks that ret is code */
            *sp = fp + 2 * sizeof(uintptr_t);
            *bp = next;
            return 1;
        }
        if (next <= fp)
            break;
        fp = next;
    }
    return 0;
}

static int use_cfi;

/* Leave the shim's frames, then follow the program's with their call frame information. */
static int capture_cfi(uintptr_t *pcs, int max, int *truncated, struct hp_walk_cache *wc,
                       const uintptr_t **out, uint64_t *hash, uintptr_t fp)
{
    uintptr_t ret, sp, bp, hi;
    struct hp_site_cache *sc = wc ? &wc->sites : NULL;
    if (sc && sc->pending && sc->q_frame == fp) {
        /* hp_stack_site_find left the shim's frames from this very frame a moment ago */
        ret = sc->q_ip;
        sp = sc->q_sp;
        bp = sc->q_bp;
        hi = sc->q_hi;
    } else if (!leave_shim(fp, &ret, &sp, &bp, &hi)) {
        return 0;
    }
    return hp_cfi_walk(ret, sp, bp, hi, pcs, max, truncated, wc, out, hash);
}

uint32_t hp_stack_site_find(struct hp_walk_cache *wc, uintptr_t frame, int *truncated)
{
    if (hp_cfi_site_skip(wc) || !__atomic_load_n(&use_cfi, __ATOMIC_RELAXED) || !frame) {
        wc->sites.pending = 0;
        return 0;
    }
    uintptr_t ret, sp, bp, hi;
    if (!leave_shim(frame, &ret, &sp, &bp, &hi))
        return 0;
    uint32_t id = hp_cfi_site_find(wc, ret, sp, bp, hi, truncated);
    wc->sites.q_frame = frame;
    return id;
}

/* The same without a walk cache, for hp_stack_capture_nested (a function of its own: the
 * allocation path's walk stays the only caller of hp_cfi_walk, which is then inlined there). */
static HP_COLD int capture_cfi_plain(uintptr_t *pcs, int max, int *truncated, uint64_t *hash,
                                     uintptr_t fp)
{
    uintptr_t ret, sp, bp, hi;
    if (!leave_shim(fp, &ret, &sp, &bp, &hi))
        return 0;
    return hp_cfi_walk_plain(ret, sp, bp, hi, pcs, max, truncated, hash);
}

static int capture_unwind(uintptr_t *pcs, int max, int *truncated)
{
    /* Into the caller's buffer (no large array on a possibly small stack), then drop the
     * shim's frames: from the front, and those of a call a signal handler interrupted, where
     * libunwind goes on through the signal frame (the handler's stack then reads as if it had
     * interrupted the program at its call into the allocator). */
    int got = unw_backtrace_fn((void **)pcs, max + HP_STACK_SLACK);
    int n = 0;
    for (int i = 0; i < got; i++)
        if (!in_shim(pcs[i]))
            pcs[n++] = pcs[i];
    if (n > max) {
        n = max;
        *truncated = 1;
    } else if (got == max + HP_STACK_SLACK) {
        *truncated = 1;
    }
    return n;
}

/* libunwind takes locks of its own (its caches) and the loader's (dl_iterate_phdr): a fork while
 * another thread holds one would leave it held in the child, whose first capture would then
 * wait forever. So fork waits until no capture is inside libunwind (hp_stack_fork_prepare), and
 * a capture that starts meanwhile uses frame pointers. */
static int unw_active, unw_forking;

static int capture_unwind_guarded(uintptr_t *pcs, int max, int *truncated, uintptr_t frame)
{
    __atomic_add_fetch(&unw_active, 1, __ATOMIC_SEQ_CST);
    if (HP_UNLIKELY(__atomic_load_n(&unw_forking, __ATOMIC_SEQ_CST))) {
        __atomic_sub_fetch(&unw_active, 1, __ATOMIC_RELEASE);
        return capture_fp(pcs, max, truncated, frame);
    }
    hp_tls.in_libunwind = 1;
    int n = capture_unwind(pcs, max, truncated);
    hp_tls.in_libunwind = 0;
    __atomic_sub_fetch(&unw_active, 1, __ATOMIC_RELEASE);
    return n;
}

void hp_stack_fork_prepare(void)
{
    __atomic_store_n(&unw_forking, 1, __ATOMIC_SEQ_CST);
    /* A signal handler forking in the middle of this thread's own capture would wait for
     * itself: that capture is not waited for. Nor is any for more than about two seconds. */
    int own = hp_tls.in_libunwind;
    uint32_t start = hp_now_ms();
    while (__atomic_load_n(&unw_active, __ATOMIC_SEQ_CST) > own && hp_now_ms() - start < 2000)
        hp_sleep_ns(20000);
}

void hp_stack_fork_parent(void) { __atomic_store_n(&unw_forking, 0, __ATOMIC_RELEASE); }

/* libunwind's code, [unw_lo, unw_hi), once loaded: pipe2 tells its calls by their return address. */
static uintptr_t unw_lo, unw_hi;

static void load_libunwind(void)
{
    void *h = dlopen("libunwind.so.8", RTLD_NOW | RTLD_LOCAL);
    void *fn = h ? dlsym(h, "unw_backtrace") : NULL;
    if (!fn) {
        hp_error("unwinder=libunwind: cannot load libunwind.so.8 (install libunwind8); "
                 "using frame pointers");
        return;
    }
#if defined(__x86_64__) || defined(__aarch64__)
    struct dl_find_object fo;
    if (_dl_find_object(fn, &fo) == 0) {
        unw_lo = (uintptr_t)fo.dlfo_map_start;
        __atomic_store_n(&unw_hi, (uintptr_t)fo.dlfo_map_end, __ATOMIC_RELEASE);
    }
#endif
    __atomic_store_n(&unw_backtrace_fn, (int (*)(void **, int))fn, __ATOMIC_RELEASE);
}

/* libunwind checks an address before reading it (in frames it has no unwinding rules for) by
 * writing a byte from it into a pipe of its own: it makes the pipe with pipe2 at its first walk,
 * and again whenever a read from it fails (the program closed it), closing the old numbers
 * first. From the program's pipe2 the pipe would take the lowest free descriptors, the ones
 * the program's next open() expects (its first file became 5, not 3), and a program that
 * closes every descriptor and opens files of its own would have them read, written and closed
 * by libunwind. So pipe2 called from libunwind's code (loaded privately by the shim, for
 * unwinder=libunwind) moves both ends up to where the shim keeps its own descriptors
 * (hp_fd_high); every other call goes straight through. */
HP_EXPORT int pipe2(int fds[2], int flags)
{
    static void *real;
    uintptr_t from = (uintptr_t)__builtin_return_address(0);
    int (*fn)(int *, int) = (int (*)(int *, int))hp_next_sym(&real, "pipe2");
    if (!fn) {
        errno = ENOSYS;
        return -1;
    }
    int r = fn(fds, flags);
    uintptr_t hi = __atomic_load_n(&unw_hi, __ATOMIC_ACQUIRE);
    if (r == 0 && from - unw_lo < hi - unw_lo) {
        fds[0] = (int)hp_fd_high(fds[0]);
        fds[1] = (int)hp_fd_high(fds[1]);
    }
    return r;
}

/* unwinder=libunwind while libc is not initialised yet (the shim's constructor runs before
 * libc's): dlopen would run libc's initialiser without the program's arguments. The library is
 * loaded by the first stack capture after libc's initialiser (hp_stack_libc_ready), unless the
 * dynamic loader itself is allocating (it may be in the middle of changing its lists) or the
 * thread's stack is small; until then frame pointers stand in, as they do for allocations made
 * before the shim's constructor. unw_deferred: UNW_DEFERRED until a thread takes the load,
 * UNW_LOADING while it loads, then 0. */
enum { UNW_DEFERRED = 1, UNW_LOADING = 2 };
static int unw_deferred, libc_ready;

/* Another thread is loading libunwind: wait for it (dlopen takes a few milliseconds, in which a
 * program's threads make hundreds of allocations: with frame pointers meanwhile, the stacks of
 * code built without them came out one frame deep, each site split in two contexts). At most
 * 200 ms: the loading thread may need a lock this one holds (the loader's, when this
 * allocation comes from a library's constructor), and then this one goes on with frame
 * pointers, lets go of the lock, and the load finishes. */
static HP_COLD void wait_libunwind_load(void)
{
    uint32_t start = hp_now_ms();
    while (__atomic_load_n(&unw_deferred, __ATOMIC_ACQUIRE) == UNW_LOADING && hp_now_ms() - start < 200)
        hp_sleep_ns(100000);
}

void hp_stack_libc_ready(void) { __atomic_store_n(&libc_ready, 1, __ATOMIC_RELEASE); }

static HP_COLD void try_deferred_libunwind(uintptr_t caller)
{
    if (!__atomic_load_n(&libc_ready, __ATOMIC_ACQUIRE))
        return;
    /* dlopen needs stack: not on a thread's small one (a later allocation will do). */
    uintptr_t lo, hi, sp = (uintptr_t)__builtin_frame_address(0);
    own_stack(&lo, &hi);
    if (sp < lo || sp >= hi || sp - lo < (256u << 10))
        return;
#if defined(__x86_64__) || defined(__aarch64__)
    struct dl_find_object fo;
    if (_dl_find_object((void *)caller, &fo) == 0 && (uintptr_t)fo.dlfo_map_start == getauxval(AT_BASE))
        return; /* the loader is allocating */
#else
    (void)caller;
#endif
    int deferred = UNW_DEFERRED;
    if (!__atomic_compare_exchange_n(&unw_deferred, &deferred, UNW_LOADING, 0, __ATOMIC_ACQ_REL,
                                     __ATOMIC_ACQUIRE))
        return; /* another thread took it */
    /* The loader's allocations are the shim's own work, not a signal handler's (HP_DEPTH_EVENT). */
    hp_tls.depth++;
    load_libunwind();
    hp_tls.depth--;
    __atomic_store_n(&unw_deferred, 0, __ATOMIC_RELEASE);
}

/* Leave off the top of a stack the frames of a library in front of the shim that hands every
 * allocation on to it (hp_be.fwd_lo/hi): the program's call into it is the site. */
static HP_COLD int drop_forwarder(const uintptr_t **out, int n, uint64_t *hash)
{
    const uintptr_t *f = *out;
    int k = 0;
    while (k < n && f[k] >= hp_be.fwd_lo && f[k] < hp_be.fwd_hi)
        k++;
    if (k) {
        *out = f + k;
        *hash = hp_stack_hash(f + k, n - k);
    }
    return n - k;
}

static int capture(uintptr_t *pcs, int max, int *truncated, struct hp_walk_cache *wc,
                   const uintptr_t **out, uint64_t *hash, uintptr_t frame);

/* A walk that went on through a signal frame into a call of the shim's that the signal
 * interrupted (outside a recording: the handler's allocation is then an ordinary one) came to
 * the shim's frames of that call: they are left out, into pcs, as hp_stack_capture_nested and
 * libunwind's capture leave them out, so the handler's stack reads as if it had interrupted
 * the program at its call into the allocator. (The cfi walk's frames are in its cache, which
 * stays as it is.) Frame 0 is never the shim's: every capture starts past its frames. */
static inline int drop_interrupted_shim(uintptr_t *pcs, const uintptr_t **out, int n, uint64_t *hash)
{
    const uintptr_t *f = *out;
    int i = 1;
    while (i < n && !in_shim(f[i]))
        i++;
    if (HP_LIKELY(i >= n))
        return n;
    int k = 0;
    for (int j = 0; j < n; j++)
        if (!in_shim(f[j]))
            pcs[k++] = f[j]; /* (k <= j: in place when f is pcs) */
    *out = pcs;
    *hash = hp_stack_hash(pcs, k);
    return k;
}

int hp_stack_capture(uintptr_t *pcs, int max, int *truncated, struct hp_walk_cache *wc,
                     const uintptr_t **out, uint64_t *hash, uintptr_t frame)
{
    int n = capture(pcs, max, truncated, wc, out, hash, frame);
    n = drop_interrupted_shim(pcs, out, n, hash);
    if (HP_UNLIKELY(hp_be.fwd_hi != 0) && n > 0)
        n = drop_forwarder(out, n, hash);
    return n;
}

static int capture(uintptr_t *pcs, int max, int *truncated, struct hp_walk_cache *wc,
                   const uintptr_t **out, uint64_t *hash, uintptr_t frame)
{
    *out = pcs;
    *hash = hp_stack_hash(pcs, 0);
    /* The walk of the shim's frames starts at the entry point's frame when the caller knows
     * it: fewer of our own frames to step over. */
    if (!frame)
        frame = (uintptr_t)__builtin_frame_address(0);
    if (__atomic_load_n(&use_cfi, __ATOMIC_RELAXED))
        return capture_cfi(pcs, max, truncated, wc, out, hash, frame);
    if (HP_UNLIKELY(__atomic_load_n(&unw_deferred, __ATOMIC_RELAXED))) {
        /* The frame-pointer walk names the caller; once libunwind is loaded it walks again. */
        int n = capture_fp(pcs, max, truncated, frame);
        if (__atomic_load_n(&unw_deferred, __ATOMIC_ACQUIRE) == UNW_LOADING)
            wait_libunwind_load();
        else if (n > 0)
            try_deferred_libunwind(pcs[0]);
        if (!__atomic_load_n(&unw_backtrace_fn, __ATOMIC_ACQUIRE)) {
            *hash = hp_stack_hash(pcs, n);
            return n;
        }
        *truncated = 0;
    }
    int n = unw_backtrace_fn ? capture_unwind_guarded(pcs, max, truncated, frame)
                             : capture_fp(pcs, max, truncated, frame);
    *hash = hp_stack_hash(pcs, n);
    return n;
}

int hp_stack_capture_nested(uintptr_t *pcs, int max, int *truncated, const uintptr_t **out,
                            uint64_t *hash, uintptr_t frame)
{
    *out = pcs;
    *hash = hp_stack_hash(pcs, 0);
    /* Finding the stack's bounds reads /proc/self/maps under a lock the interrupted code may
     * hold. */
    if (!hp_tls.stack_hi)
        return -1;
    if (!frame)
        frame = (uintptr_t)__builtin_frame_address(0);
    int n;
    if (__atomic_load_n(&use_cfi, __ATOMIC_RELAXED))
        n = capture_cfi_plain(pcs, max, truncated, hash, frame);
    /* libunwind once loaded, unless the interrupted code is inside it (it may hold libunwind's
     * locks): then, as before it is loaded and with unwinder=fp, frame pointers. */
    else if (!hp_tls.in_libunwind && !__atomic_load_n(&unw_deferred, __ATOMIC_RELAXED) &&
             __atomic_load_n(&unw_backtrace_fn, __ATOMIC_ACQUIRE))
        n = capture_unwind_guarded(pcs, max, truncated, frame);
    else
        n = capture_fp(pcs, max, truncated, frame);
    /* A walk that goes on through the signal frame comes to the shim's frames of the
     * interrupted call: left out, the handler's stack reads as if it had interrupted the
     * program at its call into the allocator. */
    int k = 0;
    for (int i = 0; i < n; i++)
        if (!in_shim(pcs[i]))
            pcs[k++] = pcs[i];
    *out = pcs;
    *hash = hp_stack_hash(pcs, k);
    if (HP_UNLIKELY(hp_be.fwd_hi != 0) && k > 0)
        k = drop_forwarder(out, k, hash);
    return k;
}

void hp_stack_before_sandbox(void)
{
#if defined(__x86_64__)
    /* libunwind checks addresses with mincore, which a seccomp filter may punish with death;
     * the cfi walk reads only the stack and the loaded objects (through the loader). */
    if (!use_cfi && hp_strcmp(hp_opt.unwinder, "libunwind") == 0 && hp_cfi_init() == 0)
        __atomic_store_n(&use_cfi, 1, __ATOMIC_RELAXED);
#endif
}

void hp_stack_code_unloaded(void)
{
    if (use_cfi)
        hp_cfi_code_unloaded();
    hp_maps_refresh(1); /* the fp walk's table of executable ranges */
}

void hp_stack_fork_child(void)
{
    /* Only this thread is left, and it is in no capture. */
    __atomic_store_n(&unw_active, 0, __ATOMIC_RELAXED);
    __atomic_store_n(&unw_forking, 0, __ATOMIC_RELEASE);
    /* A thread that was loading libunwind is not in the child: the next capture loads it. */
    if (__atomic_load_n(&unw_deferred, __ATOMIC_RELAXED) == UNW_LOADING)
        __atomic_store_n(&unw_deferred, UNW_DEFERRED, __ATOMIC_RELAXED);
    hp_lock_reset(&refresh_lock);
    hp_maps_fork_child();
}

void hp_stack_init(void)
{
    struct rlimit rl;
    main_stack_limit = 8u << 20;
    if (getrlimit(RLIMIT_STACK, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY && rl.rlim_cur > main_stack_limit)
        main_stack_limit = rl.rlim_cur;
    hp_maps_refresh(1);
    if (hp_strcmp(hp_opt.unwinder, "cfi") != 0 && hp_strcmp(hp_opt.unwinder, "fp") != 0 &&
        hp_strcmp(hp_opt.unwinder, "libunwind") != 0) {
        hp_error("unknown unwinder '%s' (cfi, fp, libunwind); using cfi", hp_opt.unwinder);
        hp_strlcpy(hp_opt.unwinder, "cfi", sizeof hp_opt.unwinder);
    }
#if defined(__x86_64__)
    /* libunwind checks addresses with mincore (hp_stack_before_sandbox). */
    if (hp_filtered && hp_strcmp(hp_opt.unwinder, "libunwind") == 0) {
        hp_warn("unwinder=libunwind: the process runs under a seccomp filter, which may forbid "
                "libunwind's mincore; using the cfi unwinder (same stacks)");
        hp_strlcpy(hp_opt.unwinder, "cfi", sizeof hp_opt.unwinder);
    }
#endif
    if (hp_strcmp(hp_opt.unwinder, "cfi") == 0) {
#if defined(__x86_64__)
        hp_cfi_init();
        use_cfi = 1;
#else
        hp_strlcpy(hp_opt.unwinder, "fp", sizeof hp_opt.unwinder); /* cfi is x86_64-only */
#endif
    }
}

void hp_stack_late_init(int libc_initialised)
{
    if (hp_strcmp(hp_opt.unwinder, "libunwind") == 0) {
        if (libc_initialised)
            load_libunwind();
        else
            unw_deferred = UNW_DEFERRED;
    }
}
