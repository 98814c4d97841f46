/* libunwind, for unwinder=libunwind: loaded privately (RTLD_LOCAL) because libunwind.so.8 also
 * exports _Unwind_* and backtrace, which must not replace libgcc's for the whole process; its
 * load deferred past libc's initialiser, its captures guarded against fork, its pipe moved. */
#include "unwind/unwind_internal.h"

#include <dlfcn.h>
#include <sys/auxv.h>

int (*hp_unw_backtrace_fn)(void **, int);

static int capture_unwind(uintptr_t *pcs, int max, int *truncated)
{
    /* Into the caller's buffer (no large array on a possibly small stack), then drop the
     * shim's frames: from the front, and those of a call a signal handler interrupted, where
     * libunwind goes on through the signal frame (the handler's stack then reads as if it had
     * interrupted the program at its call into the allocator). */
    int got = hp_unw_backtrace_fn((void **)pcs, max + HP_STACK_SLACK);
    int n = 0;
    for (int i = 0; i < got; i++)
        if (!hp_in_shim(pcs[i]))
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

int hp_capture_unwind_guarded(uintptr_t *pcs, int max, int *truncated, uintptr_t frame)
{
    __atomic_add_fetch(&unw_active, 1, __ATOMIC_SEQ_CST);
    if (HP_UNLIKELY(__atomic_load_n(&unw_forking, __ATOMIC_SEQ_CST))) {
        __atomic_sub_fetch(&unw_active, 1, __ATOMIC_RELEASE);
        return hp_capture_fp(pcs, max, truncated, frame);
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

/* libunwind's code, [unw_lo, unw_hi), once loaded: its calls of pipe2 are told by their return
 * address (hp_unwind_pipe_made). */
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
    __atomic_store_n(&hp_unw_backtrace_fn, (int (*)(void **, int))fn, __ATOMIC_RELEASE);
}

/* libunwind checks an address before reading it (in frames it has no unwinding rules for) by
 * writing a byte from it into a pipe of its own: it makes the pipe with pipe2 at its first walk,
 * and again whenever a read from it fails (the program closed it), closing the old numbers
 * first. From the program's pipe2 the pipe would take the lowest free descriptors, the ones
 * the program's next open() expects, and a program that closes every descriptor and opens
 * files of its own would have them read, written and closed by libunwind. So both ends of a
 * pipe libunwind's code makes move up to where the shim keeps its own descriptors (hp_fd_high;
 * the test fd-numbers-libunwind); every other pipe is left as it is. */
void hp_unwind_pipe_made(uintptr_t caller, int fds[2])
{
    uintptr_t hi = __atomic_load_n(&unw_hi, __ATOMIC_ACQUIRE);
    if (caller - unw_lo < hi - unw_lo) {
        fds[0] = (int)hp_fd_high(fds[0]);
        fds[1] = (int)hp_fd_high(fds[1]);
    }
}

int hp_unw_deferred;
static int libc_ready;

/* Another thread is loading libunwind: wait for it (dlopen takes a few milliseconds, in which a
 * program's threads make hundreds of allocations: with frame pointers meanwhile, the stacks of
 * code built without them would come out one frame deep, each site split in two contexts; the
 * test unw-race). At most 200 ms: the loading thread may need a lock this one holds (the loader's, when this
 * allocation comes from a library's constructor), and then this one goes on with frame
 * pointers, lets go of the lock, and the load finishes. */
HP_COLD void hp_wait_libunwind_load(void)
{
    uint32_t start = hp_now_ms();
    while (__atomic_load_n(&hp_unw_deferred, __ATOMIC_ACQUIRE) == HP_UNW_LOADING &&
           hp_now_ms() - start < 200)
        hp_sleep_ns(100000);
}

void hp_stack_libc_ready(void) { __atomic_store_n(&libc_ready, 1, __ATOMIC_RELEASE); }

HP_COLD void hp_try_deferred_libunwind(uintptr_t caller)
{
    if (!__atomic_load_n(&libc_ready, __ATOMIC_ACQUIRE))
        return;
    /* dlopen needs stack: not on a thread's small one (a later allocation will do). */
    uintptr_t lo, hi, sp = (uintptr_t)__builtin_frame_address(0);
    hp_own_stack(&lo, &hi);
    if (sp < lo || sp >= hi || sp - lo < (256u << 10))
        return;
#if defined(__x86_64__) || defined(__aarch64__)
    struct dl_find_object fo;
    if (_dl_find_object((void *)caller, &fo) == 0 && (uintptr_t)fo.dlfo_map_start == getauxval(AT_BASE))
        return; /* the loader is allocating */
#else
    (void)caller;
#endif
    int deferred = HP_UNW_DEFERRED;
    if (!__atomic_compare_exchange_n(&hp_unw_deferred, &deferred, HP_UNW_LOADING, 0,
                                     __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE))
        return; /* another thread took it */
    /* The loader's allocations are the shim's own work, not a signal handler's (HP_DEPTH_EVENT). */
    hp_tls.depth++;
    load_libunwind();
    hp_tls.depth--;
    __atomic_store_n(&hp_unw_deferred, 0, __ATOMIC_RELEASE);
}

void hp_stack_late_init(int libc_initialised)
{
    if (hp_strcmp(hp_opt.unwinder, "libunwind") == 0) {
        if (libc_initialised)
            load_libunwind();
        else
            hp_unw_deferred = HP_UNW_DEFERRED;
    }
}

void hp_unw_fork_child(void)
{
    /* Only this thread is left, and it is in no capture. */
    __atomic_store_n(&unw_active, 0, __ATOMIC_RELAXED);
    __atomic_store_n(&unw_forking, 0, __ATOMIC_RELEASE);
    /* A thread that was loading libunwind is not in the child: the next capture loads it. */
    if (__atomic_load_n(&hp_unw_deferred, __ATOMIC_RELAXED) == HP_UNW_LOADING)
        __atomic_store_n(&hp_unw_deferred, HP_UNW_DEFERRED, __ATOMIC_RELAXED);
}
