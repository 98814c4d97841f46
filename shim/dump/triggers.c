/* What makes a dump: the exit (exit, _exit), a signal that ends the process, the dump signal,
 * the interval thread, a change of credentials, a dump left pending by a signal handler; and
 * the dump's part of init and of fork. */
#include "dump/dump_internal.h"
#include "dump/dump.h"
#include "unwind/unwind.h"

#include <errno.h>
#include <signal.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

/* libc's own, not the exported name: the shim's interposer of it, or another library's that
 * comes first, is for the program's calls (as in killsig.c). */
extern int __sigaction(int sig, const struct sigaction *act, struct sigaction *old);

/* Another thread is writing the final profile (exit_dumped is set as it begins): this thread
 * must not end the process under it, which would leave a file without END (a program whose
 * threads call _exit while its main thread exits: case exit-during-dump). Its dump lock is
 * waited for, a few seconds at most, so that a writer blocked for good cannot hang the exit. */
static void wait_for_final_dump(void)
{
    if (hp_tls.depth)
        return; /* this thread may be the writer, interrupted by a signal handler */
    for (int i = 0; i < 5000; i++) {
        if (hp_trylock(&hp_ds.lock)) {
            hp_unlock(&hp_ds.lock);
            return;
        }
        hp_sleep_ns(1000000); /* not a cancellation point, errno kept */
    }
}

void hp_dump_at_exit(void)
{
    if (!hp_profiling)
        return;
    if (hp_ds.exit_dumped) {
        wait_for_final_dump();
        return;
    }
    if (hp_tls.depth) {
        /* exit() from a signal handler that interrupted this thread inside the shim: the
         * shim's locks it holds would deadlock the dump. */
        hp_error("the process exited while this thread was inside the allocator (from a signal "
                 "handler?); no exit profile written");
        return;
    }
    hp_dump(HPF_DUMP_EXIT);
}

/* The process the dump state belongs to: set at init and in fork's child handler. */
static int dump_pid;

/* dump_pid is 0 before hp_dump_init: nothing to tell apart yet, everyone is the owner. */
int hp_dump_owner(void) { return !dump_pid || (int)syscall(SYS_getpid) == dump_pid; }

void hp_dump_at__exit(void)
{
    /* A vfork child (or a clone that shares memory without fork's handlers) runs on its
     * parent's memory: a dump there would write the parent's state and mark it dumped. */
    if ((int)syscall(SYS_getpid) != dump_pid)
        return;
    hp_dump_at_exit();
}

void hp_dump_before_credentials(void)
{
    /* Not in a vfork child (its parent's state), nor from a signal handler inside the shim. */
    if (!hp_profiling || !hp_ds.out_template[0] || hp_ds.exit_dumped || hp_tls.depth ||
        !hp_dump_owner())
        return;
    /* The file exists already (an earlier change, or the spool): nothing to do. hp_dump checks
     * again under its locks. */
    if (__atomic_load_n(&hp_spool.fd, __ATOMIC_RELAXED) >= 0)
        return;
    hp_dump(HPF_DUMP_CREDENTIALS);
}

int hp_dump_request(int reason)
{
    if (hp_tls.depth) {
        /* A signal handler that interrupted the shim on this thread, which may hold the
         * shim's locks: the interrupted call writes the profile on its way out. A pending
         * kill stays: its profile is as fresh and the process must still end. */
        if (hp_dump_pending != HPF_DUMP_KILLED)
            hp_dump_pending = reason;
        return 0;
    }
    return hp_dump(reason);
}

volatile int hp_kill_pending;
volatile int hp_kill_pid;

void hp_dump_killed(int sig, int resend)
{
    /* A vfork child shares its parent's memory: it neither writes the parent's profile nor
     * marks it written. */
    if (hp_dump_owner() && hp_profiling && !hp_ds.exit_dumped) {
        hp_ds.killed_by = (uint32_t)sig;
        hp_dump(HPF_DUMP_KILLED);
    } else if (hp_dump_owner() && hp_profiling) {
        wait_for_final_dump(); /* the exit profile, being written: end after it */
    }
    hp_die_by(sig, resend);
}

static void on_signal(int sig, siginfo_t *si, void *uc)
{
    (void)sig, (void)si, (void)uc;
    int saved = errno;
    hp_dump_request(HPF_DUMP_SIGNAL);
    errno = saved;
}

static int dump_signal_installed;

/* The program gives dump_signal a disposition of its own (handler, SIG_IGN, SIG_DFL), which
 * replaces the shim's: that signal writes no dumps from then on. Said once, as the user asked
 * for them. h: the new handler (sa_handler or sa_sigaction, the same word). */
void hp_dump_signal_taken(int sig, void *h)
{
    static int said;
    if (!dump_signal_installed || sig != (int)hp_opt.dump_signal || h == (void *)on_signal ||
        __atomic_exchange_n(&said, 1, __ATOMIC_RELAXED))
        return;
    hp_warn("the program set its own disposition for SIG%s (dump_signal=%d): that signal writes no "
            "profiles from now on (pick one the program leaves alone, e.g. dump_signal=RTMIN+1, or "
            "use dump_interval_ms)", sigabbrev_np(sig) ? sigabbrev_np(sig) : "?", sig);
}

HP_COLD void hp_dump_run_pending(void)
{
    int reason = hp_dump_pending;
    if (reason && !hp_tls.depth) {
        hp_dump_pending = 0;
        if (reason == HPF_DUMP_KILLED) {
            /* Only the process the signal came to acts on it: a vfork child that died before
             * it could leaves it behind in its parent's memory. */
            if (hp_kill_pid == (int)syscall(SYS_getpid))
                hp_dump_killed(hp_kill_pending, 1);
        } else {
            hp_dump(reason);
        }
    }
}

/* May the interval thread make system calls (sleep, dump)? Not under a seccomp filter the
 * process installed: with SECCOMP_FILTER_FLAG_TSYNC it filters this thread too, and may kill
 * its sleep (or refuse it, which would turn the loop into dumps back to back); under a filter
 * no interval dump is written anyway, so the thread ends (test sandbox-tsync-*). While a
 * filter is being installed it spins without a system call until the installing thread knows
 * whether it took. */
static int interval_go_on(void)
{
    while (__atomic_load_n(&hp_sandboxing, __ATOMIC_SEQ_CST) &&
           !__atomic_load_n(&hp_sandboxed, __ATOMIC_SEQ_CST))
        hp_cpu_relax();
    return !__atomic_load_n(&hp_sandboxed, __ATOMIC_SEQ_CST);
}

void *hp_dump_interval_main(void *arg)
{
    (void)arg;
    struct timespec ts = {(time_t)(hp_opt.dump_interval_ms / 1000),
                          (long)(hp_opt.dump_interval_ms % 1000) * 1000000L};
    for (;;) {
        while (interval_go_on() && nanosleep(&ts, &ts) != 0 && errno == EINTR)
            ;
        ts.tv_sec = (time_t)(hp_opt.dump_interval_ms / 1000);
        ts.tv_nsec = (long)(hp_opt.dump_interval_ms % 1000) * 1000000L;
        /* A fork holds the dump lock from before it to after it (as does a dump): at the tick
         * it may be taken. Look again every millisecond, up to an interval, rather than lose
         * the interval's dump: a program that forks back to back would otherwise have few or
         * none (test fork-evict wants them while 200 forks run). */
        for (uint64_t waited = 0; __atomic_load_n(&hp_ds.lock.v, __ATOMIC_RELAXED) &&
                                  waited < hp_opt.dump_interval_ms && interval_go_on();
             waited++)
            hp_sleep_ns(1000000);
        if (!interval_go_on())
            return NULL;
        hp_dump(HPF_DUMP_INTERVAL);
    }
    return NULL;
}

void hp_dump_init(void)
{
    hp_pending_runner = hp_dump_run_pending;
    dump_pid = (int)syscall(SYS_getpid);
    hp_paths_init();
}

void hp_dump_late_init(void)
{
    if (!hp_profiling)
        return;
    struct sigaction cur;
    if (hp_opt.dump_signal && __sigaction((int)hp_opt.dump_signal, NULL, &cur) == 0 &&
        cur.sa_handler == SIG_IGN) {
        /* Ignored from the start (nohup's SIGHUP): a handler would undo that for every program
         * this one execs (exec keeps SIG_IGN, not a handler). It stays ignored (test
         * dump-signal-ignored). */
        hp_warn("dump_signal=%d: SIG%s is ignored in this process (inherited): it stays ignored and "
                "writes no profiles", (int)hp_opt.dump_signal,
                sigabbrev_np((int)hp_opt.dump_signal) ? sigabbrev_np((int)hp_opt.dump_signal) : "?");
    } else if (hp_opt.dump_signal) {
        struct sigaction sa;
        hp_memset(&sa, 0, sizeof sa);
        sa.sa_sigaction = on_signal;
        sa.sa_flags = SA_SIGINFO | SA_RESTART;
        sigfillset(&sa.sa_mask);
        if (__sigaction((int)hp_opt.dump_signal, &sa, NULL) != 0)
            hp_error("dump_signal=%d: cannot install the handler", (int)hp_opt.dump_signal);
        else
            dump_signal_installed = 1;
    }
    if (hp_opt.dump_on_kill && hp_ds.out_template[0])
        hp_signals_init();
}

/* Fork: the dump lock and the spool lock are held across fork() so the child never sees a
 * half-written spool record; the child then starts its own profile file. The dump lock comes
 * before every lock of the profiler (a dump takes them under it), the spool lock after the
 * threads' and the table's (an eviction spools under a thread's lock and a set's): taken
 * before them, it would deadlock a fork against a thread evicting (test fork-evict). */
void hp_dump_fork_prepare(void) { hp_lock(&hp_ds.lock); }

void hp_dump_fork_prepare_spool(void) { hp_lock(&hp_spool.lock); }

void hp_dump_fork_parent(void)
{
    hp_unlock(&hp_spool.lock);
    hp_unlock(&hp_ds.lock);
}

/* Every child, profiling or not: the prepare handlers took both locks whatever the options. */
void hp_dump_fork_child_locks(void)
{
    hp_lock_reset(&hp_spool.lock);
    hp_lock_reset(&hp_ds.lock);
}

void hp_dump_fork_child(void)
{
    hp_ds.forked_from = (uint32_t)getppid();
    hp_spool_fork_child();
    hp_ds.seq = 0;
    hp_ds.numbered.seen = 0;
    hp_ds.exit_dumped = 0;
    /* A dump or kill left pending in the parent is the parent's. */
    hp_dump_pending = 0;
    hp_kill_pending = 0;
    dump_pid = (int)syscall(SYS_getpid);
    if (hp_ds.out_template[0])
        hp_expand_path();
}

