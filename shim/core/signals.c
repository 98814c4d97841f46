/* The signal functions' side of dump/'s signal handling (killsig.c): a program that asks about
 * a signal whose SIG_DFL the shim took over hears SIG_DFL, with the flags and mask it set; its
 * own handler or SIG_IGN replaces the shim's; SIG_DFL set again brings the shim's back. */
#include "core/core.h"
#include "core/core_internal.h"
#include "dump/dump.h"
#include "backend/backend.h"
#include "rt/rt.h"

#include <errno.h>
#include <signal.h>

extern int __sigaction(int sig, const struct sigaction *act, struct sigaction *old);

static void *real_signal, *real_bsd_signal, *real_sysv_signal, *real_sigset, *real_sigignore;

void hp_signals_resolve(void)
{
    hp_next_sym(&real_signal, "signal");
    hp_next_sym(&real_bsd_signal, "bsd_signal");
    hp_next_sym(&real_sysv_signal, "sysv_signal");
    hp_next_sym(&real_sigset, "sigset");
    hp_next_sym(&real_sigignore, "sigignore");
}

int hp_sigaction(int sig, const struct sigaction *act, struct sigaction *old)
{
    if (act && HP_UNLIKELY(sig == (int)hp_opt.dump_signal))
        hp_dump_signal_taken(sig, (void *)act->sa_handler);
    if (!hp_sig_candidate(sig))
        return __sigaction(sig, act, old);
    struct sigaction prev;
    int was = hp_sig_shown(sig, &prev);
    if (!act) {
        if (!was)
            return __sigaction(sig, NULL, old);
        if (old)
            *old = prev;
        return 0;
    }
    int r = __sigaction(sig, act, old);
    if (r != 0)
        return r;
    if (old && hp_sig_is_ours(old->sa_handler))
        *old = was ? prev : (struct sigaction){.sa_handler = SIG_DFL};
    hp_sig_settle(sig);
    return 0;
}

/* One function of the signal() kind: forward, then settle, and answer SIG_DFL where the old
 * disposition was the shim's handler. */
#define SIGNAL_LIKE(name)                                                       \
    hp_sighandler_t hp_##name(int sig, hp_sighandler_t h)                       \
    {                                                                           \
        hp_sighandler_t (*f)(int, hp_sighandler_t) =                            \
            (hp_sighandler_t(*)(int, hp_sighandler_t))hp_next_sym(&real_##name, #name); \
        if (!f) {                                                               \
            errno = ENOSYS;                                                     \
            return SIG_ERR;                                                     \
        }                                                                       \
        if (HP_UNLIKELY(sig == (int)hp_opt.dump_signal))                        \
            hp_dump_signal_taken(sig, (void *)h);                               \
        hp_sighandler_t r = f(sig, h);                                          \
        if (hp_sig_candidate(sig) && r != SIG_ERR) {                            \
            r = hp_sig_shown_handler(sig, r);                                   \
            hp_sig_settle(sig);                                                 \
        }                                                                       \
        return r;                                                               \
    }

SIGNAL_LIKE(signal)
SIGNAL_LIKE(bsd_signal)
SIGNAL_LIKE(sysv_signal)
SIGNAL_LIKE(sigset)

int hp_sigignore(int sig)
{
    int (*f)(int) = (int (*)(int))hp_next_sym(&real_sigignore, "sigignore");
    if (!f) {
        errno = ENOSYS;
        return -1;
    }
    if (HP_UNLIKELY(sig == (int)hp_opt.dump_signal))
        hp_dump_signal_taken(sig, (void *)SIG_IGN);
    int r = f(sig);
    if (hp_sig_candidate(sig) && r == 0)
        hp_sig_settle(sig);
    return r;
}
