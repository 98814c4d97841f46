/* Process events the profiler must hear of: a second thread, an exit that skips destructors,
 * libraries loaded (without RTLD_DEEPBIND) and unloaded, and the program's own dump request. */
#include "core/core.h"
#include "core/core_internal.h"
#include "profile/profile.h"
#include "unwind/unwind.h"
#include "dump/dump.h"
#include "backend/backend.h"
#include "rt/rt.h"

#include <dlfcn.h>
#include <errno.h>
#include <link.h>
#include <signal.h>
#include <stddef.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "shadow/shadow.h"

/* pthread_create: the profiler learns that the process is about to have a second thread before
 * that thread can allocate (its counters switch to atomic updates, and so do the additions to
 * access histograms), and the descriptor table grows while the process has one thread
 * (hp_fd_table_grow). */
typedef int (*create_fn)(pthread_t *, const pthread_attr_t *, void *(*)(void *), void *);

static void *real_create;

static void threads_coming(void)
{
    hp_note_threads();
    __atomic_store_n(&hp_shadow_hist_shared, 1, __ATOMIC_SEQ_CST);
    hp_fd_table_grow();
}

int hp_pthread_create(pthread_t *th, const pthread_attr_t *attr, void *(*fn)(void *), void *arg)
{
    create_fn next = (create_fn)hp_next_sym(&real_create, "pthread_create");
    threads_coming();
    return next(th, attr, fn, arg);
}

/* The shim's own dump_interval_ms thread, at init and in a fork child once the profiler has
 * gone back to one thread: made as a program's thread is, through the next pthread_create
 * past the shim's (a library interposing pthread_create before the shim sees only the
 * program's threads: case own-calls-unseen), with every signal blocked (the program's signals
 * are not its to take). */
void hp_start_interval_thread(void)
{
    if (!hp_opt.dump_interval_ms || !hp_profiling)
        return;
    create_fn next = (create_fn)hp_next_sym(&real_create, "pthread_create");
    sigset_t all, old;
    sigfillset(&all);
    pthread_sigmask(SIG_SETMASK, &all, &old);
    threads_coming();
    pthread_t th;
    if (next && next(&th, NULL, hp_dump_interval_main, NULL) == 0)
        pthread_detach(th);
    else
        hp_error("cannot start the dump_interval_ms thread");
    pthread_sigmask(SIG_SETMASK, &old, NULL);
}

/* _exit and _Exit end the process without running destructors, so the exit profile is written
 * here first. That is how most forked children end (after fork, a child that does not exec is
 * told to leave by _exit, not to flush its parent's stdio twice). Then the process ends the way
 * glibc's _exit does, with exit_group. */
void hp_exit(int status)
{
    if (__atomic_load_n(&hp_init_state, __ATOMIC_ACQUIRE) == HP_INIT_DONE && hp_profiling)
        hp_dump_at__exit();
    for (;;) {
        syscall(SYS_exit_group, status);
        syscall(SYS_exit, status);
    }
}

/* dlopen without RTLD_DEEPBIND (strip_deepbind=1): a library opened with it binds malloc and
 * free to libc's directly, and would then free the shim's blocks behind its back. */
void *hp_dlopen_next(int *mask)
{
    hp_ready();
    static void *slot;
    void *real = hp_next_sym(&slot, "dlopen");
    *mask = hp_opt.strip_deepbind ? ~RTLD_DEEPBIND : ~0;
    return real;
}

static int read_unloads(struct dl_phdr_info *info, size_t size, void *arg)
{
    if (size >= offsetof(struct dl_phdr_info, dlpi_subs) + sizeof info->dlpi_subs)
        *(unsigned long long *)arg = info->dlpi_subs;
    return 1;
}

/* How many objects the loader has unloaded so far. */
static unsigned long long unloads(void)
{
    unsigned long long n = 0;
    dl_iterate_phdr(read_unloads, &n);
    return n;
}

/* dlclose: note the library first (retired.c), so frames in it can still be symbolised; when
 * code really went away (not just a reference), forget the unwinding rules cached for its
 * addresses, where the next library may be loaded. */
int hp_dlclose(void *handle)
{
    static void *slot;
    int (*real)(void *) = (int (*)(void *))hp_next_sym(&slot, "dlclose");
    /* The shim's own work counts as inside the shim (it takes the shim's locks: a signal
     * handler's dump must wait for it), the library's destructors in real() do not. */
    hp_tls.depth++;
    hp_retire_note(handle);
    unsigned long long before = hp_ready() ? unloads() : 0;
    hp_leave();
    int r = real(handle);
    hp_tls.depth++;
    if (hp_ready() && unloads() != before)
        hp_stack_code_unloaded();
    hp_leave();
    return r;
}

int hp_heapprof_dump(void)
{
    if (!hp_ready() || !hp_profiling)
        return -1;
    return hp_dump_request(HPF_DUMP_API); /* also from a signal handler */
}

int hp_pipe2(int fds[2], int flags, uintptr_t caller)
{
    static void *real;
    int (*fn)(int *, int) = (int (*)(int *, int))hp_next_sym(&real, "pipe2");
    if (!fn) {
        errno = ENOSYS;
        return -1;
    }
    int r = fn(fds, flags);
    if (r == 0)
        hp_unwind_pipe_made(caller, fds);
    return r;
}
