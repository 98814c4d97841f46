/* Signal dispositions, as the program sees them, and deaths by signal. The shim takes over the
 * SIG_DFL of the signals that end a process (to write a profile first): every query must still
 * answer SIG_DFL with the flags and mask the program set, every change must behave as without
 * the shim, and children must end by the same signals. Output is compared with a bare run. */
#define _GNU_SOURCE /* sysv_signal, sigset, sigignore, bsd_signal */
#include "testutil.h"

#include <errno.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

static const int sigs[] = {SIGHUP,  SIGINT,  SIGQUIT,   SIGPIPE, SIGALRM, SIGTERM,
                           SIGUSR1, SIGUSR2, SIGXCPU,   SIGXFSZ, SIGVTALRM, SIGABRT,
                           SIGSEGV, SIGBUS,  SIGILL,    SIGFPE};
#define NSIGS (int)(sizeof sigs / sizeof sigs[0])

/* Not declared by glibc's headers any more, still exported (and interposed by the shim). */
extern void (*bsd_signal(int sig, void (*h)(int)))(int);

static volatile int caught;
static void on_sig(int sig) { caught = sig; }

static const char *name(void (*h)(int))
{
    return h == SIG_DFL ? "SIG_DFL" : h == SIG_IGN ? "SIG_IGN" : h == on_sig ? "on_sig" : "other";
}

static void show(const char *what, int sig)
{
    struct sigaction sa;
    CHECK(sigaction(sig, NULL, &sa) == 0, "sigaction query %d", sig);
    int masked = 0;
    for (int s = 1; s < 32; s++)
        masked += sigismember(&sa.sa_mask, s) ? s : 0;
    printf("%s: sig %d %s flags %#x mask-sum %d\n", what, sig, name(sa.sa_handler),
           (unsigned)(sa.sa_flags & ~0x04000000 /* SA_RESTORER: glibc's own */), masked);
}

/* Fork a child that runs fn, and print how it ended. */
static void child(const char *what, void (*fn)(int), int sig)
{
    fflush(stdout);
    pid_t pid = fork();
    CHECK(pid >= 0, "fork");
    if (pid == 0) {
        for (int i = 0; i < 100; i++)
            free(malloc(64 + i)); /* the shim has something to write */
        fn(sig);
        _exit(0);
    }
    int st;
    CHECK(waitpid(pid, &st, 0) == pid, "waitpid");
    if (WIFSIGNALED(st))
        printf("%s %d: killed by signal %d\n", what, sig, WTERMSIG(st));
    else
        printf("%s %d: exit %d\n", what, sig, WEXITSTATUS(st));
}

static void by_kill(int sig) { kill(getpid(), sig); pause(); }
static void by_raise(int sig) { raise(sig); }
static void ignored(int sig) { signal(sig, SIG_IGN); raise(sig); }
static void reset_then_kill(int sig)
{
    signal(sig, on_sig);
    signal(sig, SIG_DFL);
    kill(getpid(), sig);
    pause();
}
static void waited(int sig)
{
    sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, sig);
    sigprocmask(SIG_BLOCK, &set, NULL);
    raise(sig);
    int got = 0;
    CHECK(sigwait(&set, &got) == 0 && got == sig, "sigwait");
    _exit(7);
}
static int *volatile null_ptr;
static void aborts(int sig) { (void)sig; abort(); }
static void faults(int sig) { (void)sig; *null_ptr = 1; }
static void broken_pipe(int sig)
{
    (void)sig;
    int fd[2];
    CHECK(pipe(fd) == 0, "pipe");
    close(fd[0]);
    (void)!write(fd[1], "x", 1);
    _exit(3); /* not reached: SIGPIPE ends the process */
}

int main(void)
{
    for (int i = 0; i < NSIGS; i++)
        show("start", sigs[i]);

    /* signal(): old values in both directions. */
    void (*old)(int) = signal(SIGTERM, on_sig);
    printf("signal(TERM, on_sig) returned %s\n", name(old));
    old = signal(SIGTERM, SIG_DFL);
    printf("signal(TERM, SIG_DFL) returned %s\n", name(old));
    old = signal(SIGTERM, SIG_DFL);
    printf("signal(TERM, SIG_DFL) again returned %s\n", name(old));
    show("after signal", SIGTERM);

    /* sigaction: SIG_DFL with flags and a mask comes back as set; the old action too. */
    struct sigaction sa, prev;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = SIG_DFL;
    sa.sa_flags = SA_RESTART | SA_NODEFER;
    sigemptyset(&sa.sa_mask);
    sigaddset(&sa.sa_mask, SIGUSR1);
    sigaddset(&sa.sa_mask, SIGCHLD);
    CHECK(sigaction(SIGHUP, &sa, &prev) == 0, "sigaction HUP");
    printf("HUP old: %s\n", name(prev.sa_handler));
    show("after sigaction", SIGHUP);
    sa.sa_handler = on_sig;
    CHECK(sigaction(SIGHUP, &sa, &prev) == 0, "sigaction HUP handler");
    printf("HUP old: %s flags %#x\n", name(prev.sa_handler), (unsigned)(prev.sa_flags & ~0x04000000));
    show("handler set", SIGHUP);
    sa.sa_handler = SIG_DFL;
    sa.sa_flags = 0;
    sigemptyset(&sa.sa_mask);
    CHECK(sigaction(SIGHUP, &sa, &prev) == 0, "sigaction HUP default");
    printf("HUP old: %s\n", name(prev.sa_handler));

    /* The other functions. */
    old = sysv_signal(SIGUSR2, SIG_IGN);
    printf("sysv_signal(USR2, SIG_IGN) returned %s\n", name(old));
    show("sysv_signal", SIGUSR2);
    old = sysv_signal(SIGUSR2, SIG_DFL);
    printf("sysv_signal(USR2, SIG_DFL) returned %s\n", name(old));
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"
    old = sigset(SIGALRM, SIG_HOLD);
    printf("sigset(ALRM, SIG_HOLD) returned %s\n", name(old));
    show("sigset hold", SIGALRM);
    old = sigset(SIGALRM, SIG_DFL);
    printf("sigset(ALRM, SIG_DFL) returned %s\n", name(old));
    CHECK(sigignore(SIGXCPU) == 0, "sigignore");
    show("sigignore", SIGXCPU);
#pragma GCC diagnostic pop
    old = bsd_signal(SIGXCPU, SIG_DFL);
    printf("bsd_signal(XCPU, SIG_DFL) returned %s\n", name(old));

    /* A handler of the program's own runs. */
    signal(SIGUSR1, on_sig);
    raise(SIGUSR1);
    printf("caught %d\n", caught);
    signal(SIGUSR1, SIG_DFL);

    for (int i = 0; i < NSIGS; i++)
        show("end", sigs[i]);

    /* Deaths. */
    child("kill", by_kill, SIGTERM);
    child("kill", by_kill, SIGINT);
    child("kill", by_kill, SIGHUP);
    child("kill", by_kill, SIGUSR2);
    child("raise", by_raise, SIGUSR1);
    child("raise", by_raise, SIGQUIT);
    child("raise", by_raise, SIGVTALRM);
    child("reset", reset_then_kill, SIGTERM);
    child("ignored", ignored, SIGTERM);
    child("sigwait", waited, SIGTERM);
    child("pipe", broken_pipe, SIGPIPE);
    child("abort", aborts, SIGABRT);
    child("fault", faults, SIGSEGV);
    return 0;
}
