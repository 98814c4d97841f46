/* Unit tests for the kill-signal takeover (shim/killsig.c): which signals the shim takes, what
 * the program is shown, giving a signal back and taking it again, and that a taken signal still
 * ends the process with that signal. Each test runs in its own process (CK_FORK). */
#include "unit_support.h"

#include "core/core.h"
#include "profile/profile.h"
#include "unwind/unwind.h"
#include "dump/dump.h"
#include "rt/rt.h"

#include <signal.h>
#include <sys/wait.h>

extern int __sigaction(int sig, const struct sigaction *act, struct sigaction *old);

static void set_disp(int sig, void (*h)(int), int flags)
{
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = h;
    sa.sa_flags = flags;
    sigemptyset(&sa.sa_mask);
    if (h == SIG_DFL)
        sigaddset(&sa.sa_mask, SIGCHLD);
    ck_assert_int_eq(__sigaction(sig, &sa, NULL), 0);
}

static void (*kernel_handler(int sig))(int)
{
    struct sigaction sa;
    ck_assert_int_eq(__sigaction(sig, NULL, &sa), 0);
    return sa.sa_handler;
}

static void on_usr(int sig) { (void)sig; }

START_TEST(test_takes_default_signals_only)
{
    set_disp(SIGTERM, SIG_DFL, SA_RESTART);
    set_disp(SIGHUP, SIG_IGN, 0);
    set_disp(SIGUSR1, on_usr, 0);
    hp_opt.dump_signal = 0;
    hp_signals_init();
    struct sigaction shown;
    ck_assert(hp_sig_shown(SIGTERM, &shown));
    ck_assert_ptr_eq((void *)shown.sa_handler, (void *)SIG_DFL);
    ck_assert(shown.sa_flags & SA_RESTART);       /* as the program set it */
    ck_assert(sigismember(&shown.sa_mask, SIGCHLD));
    ck_assert(hp_sig_is_ours(kernel_handler(SIGTERM)));
    ck_assert(!hp_sig_shown(SIGHUP, NULL));        /* ignored (nohup): left alone */
    ck_assert_ptr_eq((void *)kernel_handler(SIGHUP), (void *)SIG_IGN);
    ck_assert(!hp_sig_shown(SIGUSR1, NULL));       /* the program's handler: left alone */
    ck_assert_ptr_eq((void *)kernel_handler(SIGUSR1), (void *)on_usr);
    /* Signals whose default does not end the process, or that cannot be caught, never are. */
    ck_assert(hp_sig_candidate(SIGSEGV) && hp_sig_candidate(SIGABRT));
    ck_assert(!hp_sig_candidate(SIGCHLD));
    ck_assert(!hp_sig_candidate(SIGWINCH));
    ck_assert(!hp_sig_candidate(SIGKILL));
    ck_assert(!hp_sig_candidate(SIGSTOP));
    ck_assert(!hp_sig_candidate(SIGTRAP));
    ck_assert(!hp_sig_candidate(0));
    ck_assert(!hp_sig_candidate(64));
}
END_TEST

START_TEST(test_dump_signal_is_not_taken)
{
    set_disp(SIGUSR2, SIG_DFL, 0);
    hp_opt.dump_signal = SIGUSR2;
    hp_signals_init();
    ck_assert(!hp_sig_candidate(SIGUSR2));
    ck_assert_ptr_eq((void *)kernel_handler(SIGUSR2), (void *)SIG_DFL);
    ck_assert(hp_sig_candidate(SIGTERM));
    hp_opt.dump_signal = 0;
}
END_TEST

START_TEST(test_settle_gives_back_and_takes_again)
{
    set_disp(SIGINT, SIG_DFL, 0);
    hp_opt.dump_signal = 0;
    hp_signals_init();
    ck_assert(hp_sig_shown(SIGINT, NULL));
    set_disp(SIGINT, on_usr, 0); /* what an interposed sigaction forwards */
    hp_sig_settle(SIGINT);
    ck_assert(!hp_sig_shown(SIGINT, NULL));
    ck_assert_ptr_eq((void *)kernel_handler(SIGINT), (void *)on_usr);
    set_disp(SIGINT, SIG_DFL, SA_NODEFER);
    hp_sig_settle(SIGINT);
    struct sigaction shown;
    ck_assert(hp_sig_shown(SIGINT, &shown));
    ck_assert(shown.sa_flags & SA_NODEFER);
    ck_assert(hp_sig_is_ours(kernel_handler(SIGINT)));
    /* Settling while the shim's handler is still there changes nothing. */
    hp_sig_settle(SIGINT);
    ck_assert(hp_sig_shown(SIGINT, NULL));
}
END_TEST

/* A one-shot handler (SA_RESETHAND) is installed through the shim's wrapper, shown as the
 * program set it, and reset by the wrapper: inside the handler and after it, the signal is a
 * SIG_DFL the shim holds. */
static volatile int oneshot_runs;
static volatile int oneshot_saw_default;

static void on_oneshot_prog(int sig)
{
    struct sigaction now;
    oneshot_runs++;
    oneshot_saw_default = hp_sig_shown(sig, &now) && now.sa_handler == SIG_DFL &&
                          hp_sig_is_ours(kernel_handler(sig));
}

START_TEST(test_oneshot_handler_is_reset_by_the_shim)
{
    set_disp(SIGTERM, SIG_DFL, 0);
    hp_opt.dump_signal = 0;
    hp_signals_init();
    set_disp(SIGTERM, on_oneshot_prog, SA_RESETHAND | SA_RESTART); /* as forwarded */
    hp_sig_settle(SIGTERM);
    struct sigaction shown, kern;
    ck_assert(hp_sig_shown(SIGTERM, &shown));
    ck_assert_ptr_eq((void *)shown.sa_handler, (void *)on_oneshot_prog);
    ck_assert(shown.sa_flags & SA_RESETHAND);
    ck_assert_int_eq(__sigaction(SIGTERM, NULL, &kern), 0);
    ck_assert(hp_sig_is_ours(kern.sa_handler));
    ck_assert(!(kern.sa_flags & SA_RESETHAND));
    ck_assert(kern.sa_flags & SA_RESTART);
    ck_assert_ptr_eq((void *)hp_sig_shown_handler(SIGTERM, kern.sa_handler), (void *)on_oneshot_prog);
    raise(SIGTERM);
    ck_assert_int_eq(oneshot_runs, 1);
    ck_assert(oneshot_saw_default);
    ck_assert(hp_sig_shown(SIGTERM, &shown));
    ck_assert_ptr_eq((void *)shown.sa_handler, (void *)SIG_DFL);
    ck_assert_ptr_eq((void *)hp_sig_shown_handler(SIGTERM, kernel_handler(SIGTERM)), (void *)SIG_DFL);
    /* An SA_RESETHAND SIG_IGN is just SIG_IGN: let go. */
    set_disp(SIGTERM, SIG_IGN, SA_RESETHAND);
    hp_sig_settle(SIGTERM);
    ck_assert(!hp_sig_shown(SIGTERM, NULL));
    ck_assert_ptr_eq((void *)kernel_handler(SIGTERM), (void *)SIG_IGN);
}
END_TEST

/* A child that takes SIGTERM over, then gets it: it must die of SIGTERM (no profiling in the
 * unit test, so the handler goes straight to the default action). */
START_TEST(test_taken_signal_still_kills)
{
    int sigs[] = {SIGTERM, SIGINT, SIGPIPE, SIGUSR1};
    for (unsigned i = 0; i < sizeof sigs / sizeof sigs[0]; i++) {
        pid_t pid = fork();
        ck_assert_int_ge(pid, 0);
        if (pid == 0) {
            set_disp(sigs[i], SIG_DFL, 0);
            hp_opt.dump_signal = 0;
            hp_signals_init();
            if (!hp_sig_is_ours(kernel_handler(sigs[i])))
                _exit(2);
            kill(getpid(), sigs[i]);
            _exit(3);
        }
        int st;
        ck_assert_int_eq(waitpid(pid, &st, 0), pid);
        ck_assert_msg(WIFSIGNALED(st) && WTERMSIG(st) == sigs[i], "signal %d: status %#x", sigs[i], st);
    }
}
END_TEST

/* Crashes: a fault the processor raised faults again after the handler (no loop, same signal),
 * abort() still aborts, and a fault sent with kill() is sent again. */
static volatile int *volatile null_ptr;
static volatile int zero;

static void crash(int how)
{
    set_disp(SIGSEGV, SIG_DFL, 0);
    set_disp(SIGFPE, SIG_DFL, 0);
    set_disp(SIGABRT, SIG_DFL, 0);
    hp_opt.dump_signal = 0;
    hp_signals_init();
    if (!hp_sig_is_ours(kernel_handler(SIGSEGV)))
        _exit(2);
    switch (how) {
    case 0: *null_ptr = 1; break;
    case 1: zero = 7919 / zero; break;
    case 2: abort();
    default: kill(getpid(), SIGSEGV); pause(); break;
    }
    _exit(3);
}

START_TEST(test_crashes_end_as_crashes)
{
    int want[] = {SIGSEGV, SIGFPE, SIGABRT, SIGSEGV};
    for (int how = 0; how < 4; how++) {
        pid_t pid = fork();
        ck_assert_int_ge(pid, 0);
        if (pid == 0)
            crash(how);
        int st;
        ck_assert_int_eq(waitpid(pid, &st, 0), pid);
        ck_assert_msg(WIFSIGNALED(st) && WTERMSIG(st) == want[how], "case %d: status %#x", how, st);
    }
}
END_TEST

START_TEST(test_die_by_restores_default)
{
    pid_t pid = fork();
    ck_assert_int_ge(pid, 0);
    if (pid == 0) {
        set_disp(SIGHUP, SIG_DFL, 0);
        hp_opt.dump_signal = 0;
        hp_signals_init();
        sigset_t set;
        sigemptyset(&set);
        sigaddset(&set, SIGHUP);
        sigprocmask(SIG_BLOCK, &set, NULL);
        hp_die_by(SIGHUP, 1); /* pending while blocked */
        if (kernel_handler(SIGHUP) != SIG_DFL || hp_sig_shown(SIGHUP, NULL))
            _exit(2);
        sigprocmask(SIG_UNBLOCK, &set, NULL);
        _exit(3);
    }
    int st;
    ck_assert_int_eq(waitpid(pid, &st, 0), pid);
    ck_assert_msg(WIFSIGNALED(st) && WTERMSIG(st) == SIGHUP, "status %#x", st);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("killsig");
    TCase *tc = tcase_create("killsig");
    tcase_add_test(tc, test_takes_default_signals_only);
    tcase_add_test(tc, test_dump_signal_is_not_taken);
    tcase_add_test(tc, test_settle_gives_back_and_takes_again);
    tcase_add_test(tc, test_oneshot_handler_is_reset_by_the_shim);
    tcase_add_test(tc, test_taken_signal_still_kills);
    tcase_add_test(tc, test_die_by_restores_default);
    tcase_add_test(tc, test_crashes_end_as_crashes);
    suite_add_tcase(s, tc);
    return hp_unit_run(s);
}
