/* Profiles of processes that a signal ends: the shim's handler on the kill signals the program
 * leaves at SIG_DFL writes the final profile, then the signal ends the process as it would have;
 * and what the program sees of those signals' dispositions meanwhile. */
#include "dump/dump.h"
#include "rt/rt.h"

#include <errno.h>
#include <signal.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

/* A server stopped with Ctrl-C or `kill` runs no destructors, so the exit profile would never
 * be written; nor does a program that aborts (std::bad_alloc ends in abort: the profile matters
 * most then) or crashes. For each signal whose default action ends the process (HUP INT QUIT
 * PIPE ALRM TERM USR1 USR2 XCPU XFSZ VTALRM, ABRT, and the faults SEGV BUS ILL FPE) and that the
 * program leaves at SIG_DFL, the shim installs its own handler: it writes the final profile,
 * puts SIG_DFL back and sends the signal again (a fault needs no sending: the instruction
 * faults again), so the process ends exactly as it would have (same signal, same core dump;
 * tests killed-*).
 *
 * The program must not notice: the signal functions are interposed so that a query answers
 * SIG_DFL (with the flags and mask the program set), a program's own handler or SIG_IGN
 * replaces the shim's, and setting SIG_DFL again brings the shim's back; a handler installed
 * with SA_RESETHAND is reset by the shim rather than the kernel (on_oneshot). Signals ignored or
 * handled when the shim starts (nohup's SIGHUP) are left alone, and exec resets handlers as
 * always. Code that calls glibc's __sigaction or the system call directly goes around this;
 * it then sees the shim's handler. */

/* glibc's exported alias of sigaction, which the shim does not interpose: the real one. */
extern int __sigaction(int sig, const struct sigaction *act, struct sigaction *old);

static const int kill_sigs[] = {SIGHUP,  SIGINT,  SIGQUIT, SIGPIPE,   SIGALRM, SIGTERM, SIGUSR1,
                                SIGUSR2, SIGXCPU, SIGXFSZ, SIGVTALRM, SIGABRT, SIGSEGV, SIGBUS,
                                SIGILL,  SIGFPE};

volatile int hp_crashing;

static int enabled;          /* hp_signals_init ran with dump_on_kill */
static uint64_t candidates;  /* bit per signal the shim may take over */
static uint64_t managed;     /* bit per signal whose handler is the shim's right now */
static struct sigaction shown[65]; /* what the program believes is installed (SIG_DFL) */

int hp_sig_candidate(int sig) { return enabled && sig > 0 && sig < 64 && ((candidates >> sig) & 1); }
static int is_managed(int sig) { return (__atomic_load_n(&managed, __ATOMIC_ACQUIRE) >> sig) & 1; }

static void on_kill(int sig, siginfo_t *si, void *uc)
{
    (void)uc;
    int saved = errno;
    /* A fault the processor raised (not one sent with kill): returning re-runs the faulting
     * instruction, which faults again. */
    int fault = (sig == SIGSEGV || sig == SIGBUS || sig == SIGILL || sig == SIGFPE) && si &&
                si->si_code > 0;
    int owner = hp_dump_owner();
    if (hp_tls.depth && !fault) {
        /* This thread was inside the shim and may hold its locks: the interrupted call
         * writes the profile and ends the process on its way out (hp_leave). A vfork child
         * (it runs on its parent's memory and thread state) must leave the shim the same way,
         * or its parent would find the shim's locks held and its thread marked inside; the
         * pid says whose kill it is. */
        hp_kill_pending = sig;
        hp_kill_pid = (int)syscall(SYS_getpid);
        hp_dump_pending = HPF_DUMP_KILLED;
        errno = saved;
        return;
    }
    if (!owner) {
        /* A vfork child (or a clone sharing memory without fork's handlers): no profile of
         * its own, it just dies (hp_die_by leaves the shared state alone). */
        hp_die_by(sig, !fault);
        errno = saved;
        return;
    }
    if (fault || sig == SIGABRT)
        hp_crashing = 1; /* memory may be damaged: no lock wait may hang the crash */
    if (hp_tls.depth) {
        /* A fault inside the shim: no profile, just the default action. */
        hp_die_by(sig, 0);
        errno = saved;
        return;
    }
    hp_dump_killed(sig, !fault); /* a signal sent again is blocked until this handler returns */
    errno = saved;
}

void hp_die_by(int sig, int resend)
{
    struct sigaction dfl;
    hp_memset(&dfl, 0, sizeof dfl);
    dfl.sa_handler = SIG_DFL;
    /* A vfork child's table of handlers is its own, but this bit is its parent's. */
    if (hp_dump_owner())
        __atomic_fetch_and(&managed, ~((uint64_t)1 << sig), __ATOMIC_ACQ_REL);
    __sigaction(sig, &dfl, NULL);
    /* To the process, not this thread: when a thread other than the one the signal was
     * delivered to runs a pending kill, it may have the signal blocked. */
    if (resend)
        syscall(SYS_kill, syscall(SYS_getpid), sig);
}

/* Put the shim's handler in place of SIG_DFL, remembering the flags and mask the program set
 * with it (cur). */
static void take_over(int sig, const struct sigaction *cur)
{
    struct sigaction sa;
    hp_memset(&sa, 0, sizeof sa);
    sa.sa_sigaction = on_kill;
    sa.sa_flags = SA_SIGINFO | SA_RESTART;
    sigfillset(&sa.sa_mask);
    hp_memcpy(&shown[sig], cur, sizeof *cur);
    if (__sigaction(sig, &sa, NULL) == 0)
        __atomic_fetch_or(&managed, (uint64_t)1 << sig, __ATOMIC_ACQ_REL);
}

/* ---------- one-shot handlers ----------
 * A handler installed with SA_RESETHAND (sysv_signal's, node's for SIGINT and SIGTERM) is
 * reset to SIG_DFL by the kernel when the signal arrives, behind the signal functions: a
 * handler that then raises the signal again (to die of it, as node does) would die without a
 * profile. So such a handler is installed through on_oneshot without the flag: on_oneshot
 * makes the reset itself, as a SIG_DFL the shim takes over, and calls the program's handler.
 * The signal stays blocked while it runs unless the program asked for SA_NODEFER, as with
 * the kernel's reset (tests killed-RESETHAND, killed-SYSV). */
static struct sigaction oneshot[65]; /* the program's handler, flags and mask */
static uint64_t oneshot_set;         /* bit per signal whose handler is on_oneshot */

static int is_oneshot(int sig) { return (__atomic_load_n(&oneshot_set, __ATOMIC_ACQUIRE) >> sig) & 1; }

static void on_oneshot(int sig, siginfo_t *si, void *uc)
{
    struct sigaction prog = oneshot[sig];
    struct sigaction dfl = prog;
    dfl.sa_handler = SIG_DFL;
    __atomic_fetch_and(&oneshot_set, ~((uint64_t)1 << sig), __ATOMIC_ACQ_REL);
    take_over(sig, &dfl);
    if (prog.sa_flags & SA_SIGINFO)
        prog.sa_sigaction(sig, si, uc);
    else if (prog.sa_handler != SIG_DFL && prog.sa_handler != SIG_IGN)
        prog.sa_handler(sig);
}

/* Install cur (the program's one-shot handler, just set) through on_oneshot. */
static void wrap_oneshot(int sig, const struct sigaction *cur)
{
    struct sigaction sa;
    hp_memcpy(&sa, cur, sizeof sa);
    sa.sa_sigaction = on_oneshot;
    sa.sa_flags = (cur->sa_flags & ~SA_RESETHAND) | SA_SIGINFO;
    hp_memcpy(&oneshot[sig], cur, sizeof *cur);
    if (__sigaction(sig, &sa, NULL) == 0)
        __atomic_fetch_or(&oneshot_set, (uint64_t)1 << sig, __ATOMIC_ACQ_REL);
}

int hp_sig_is_ours(void (*h)(int))
{
    return h == (void (*)(int))(void *)on_kill || h == (void (*)(int))(void *)on_oneshot;
}

/* After the program changed sig's disposition through a real signal function: take over a
 * SIG_DFL, wrap a one-shot handler, forget the signal otherwise. */
void hp_sig_settle(int sig)
{
    struct sigaction cur;
    if (__sigaction(sig, NULL, &cur) != 0 || hp_sig_is_ours(cur.sa_handler))
        return; /* still the shim's (sigset's SIG_HOLD only blocks the signal) */
    __atomic_fetch_and(&oneshot_set, ~((uint64_t)1 << sig), __ATOMIC_ACQ_REL);
    if (cur.sa_handler == SIG_DFL) {
        take_over(sig, &cur);
        return;
    }
    __atomic_fetch_and(&managed, ~((uint64_t)1 << sig), __ATOMIC_ACQ_REL);
    if ((cur.sa_flags & SA_RESETHAND) && cur.sa_handler != SIG_IGN)
        wrap_oneshot(sig, &cur);
}

void hp_signals_init(void)
{
    for (unsigned i = 0; i < sizeof kill_sigs / sizeof kill_sigs[0]; i++)
        if (kill_sigs[i] != (int)hp_opt.dump_signal)
            candidates |= (uint64_t)1 << kill_sigs[i];
    enabled = 1;
    for (unsigned i = 0; i < sizeof kill_sigs / sizeof kill_sigs[0]; i++) {
        int sig = kill_sigs[i];
        struct sigaction cur;
        if (hp_sig_candidate(sig) && __sigaction(sig, NULL, &cur) == 0 && cur.sa_handler == SIG_DFL)
            take_over(sig, &cur);
    }
}

int hp_sig_shown(int sig, struct sigaction *out)
{
    if (!hp_sig_candidate(sig))
        return 0;
    if (is_oneshot(sig)) {
        if (out)
            hp_memcpy(out, &oneshot[sig], sizeof *out);
        return 1;
    }
    if (!is_managed(sig))
        return 0;
    if (out)
        hp_memcpy(out, &shown[sig], sizeof *out);
    return 1;
}

void (*hp_sig_shown_handler(int sig, void (*h)(int)))(int)
{
    struct sigaction sa;
    if (h == (void (*)(int))(void *)on_oneshot && hp_sig_shown(sig, &sa))
        return sa.sa_handler;
    return hp_sig_is_ours(h) ? SIG_DFL : h;
}
