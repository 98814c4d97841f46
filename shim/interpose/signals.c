/* The signal functions: each a forward into core/signals.c, which keeps what the program sees
 * of the signals the shim takes over (dump/killsig.c) as the program set it. */
#include "core/core.h"
#include "rt/rt.h"

#include <signal.h>

HP_EXPORT int sigaction(int sig, const struct sigaction *act, struct sigaction *old)
{
    return hp_sigaction(sig, act, old);
}
HP_EXPORT hp_sighandler_t signal(int sig, hp_sighandler_t h) { return hp_signal(sig, h); }
HP_EXPORT hp_sighandler_t bsd_signal(int sig, hp_sighandler_t h) { return hp_bsd_signal(sig, h); }
HP_EXPORT hp_sighandler_t sysv_signal(int sig, hp_sighandler_t h) { return hp_sysv_signal(sig, h); }
HP_EXPORT hp_sighandler_t sigset(int sig, hp_sighandler_t h) { return hp_sigset(sig, h); }
HP_EXPORT int sigignore(int sig) { return hp_sigignore(sig); }
