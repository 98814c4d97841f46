/* A process that a signal ends still leaves its profile: known sites, then a busy loop of
 * allocations (so the signal often lands while the thread is inside the shim) until the test
 * kills it. argv[1] names the signal it will get, which it sets to SIG_DFL first (a shell's
 * background job starts with SIGINT ignored); ABRT and SEGV make it end itself after the
 * sites instead, by abort() and by a write through a null pointer, RERAISE by SIGTERM to
 * a handler of its own that restores SIG_DFL and raises the signal again, RESETHAND and SYSV
 * by SIGTERM to a one-shot handler (sigaction's SA_RESETHAND, sysv_signal) that raises it
 * again. */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void *volatile sink;
int *volatile null_ptr;
static void *leaks[500];

__attribute__((noinline)) void site_short(void)
{
    for (int i = 0; i < 1000; i++) {
        sink = malloc(100);
        free(sink);
    }
}

__attribute__((noinline)) void site_leak(void)
{
    for (int i = 0; i < 500; i++)
        leaks[i] = malloc(300);
}

__attribute__((noinline)) void site_loop(void)
{
    for (unsigned i = 0;; i++) {
        void *p = malloc(16 + i % 64);
        sink = p;
        free(p);
    }
}

static void reraise(int sig)
{
    signal(sig, SIG_DFL);
    raise(sig);
}

/* A one-shot handler (SA_RESETHAND, as node's): the disposition is already SIG_DFL when it
 * runs, and it raises the signal again to die of it. */
static void oneshot(int sig)
{
    struct sigaction now;
    if (sigaction(sig, NULL, &now) != 0 || now.sa_handler != SIG_DFL) {
        fputs("killed: the disposition in a one-shot handler is not SIG_DFL\n", stderr);
        exit(2);
    }
    raise(sig);
}

extern __sighandler_t sysv_signal(int, __sighandler_t);

int main(int argc, char **argv)
{
    const char *how = argc > 1 ? argv[1] : "TERM";
    int sig = !strcmp(how, "INT") ? SIGINT : !strcmp(how, "HUP") ? SIGHUP : SIGTERM;
    signal(sig, SIG_DFL);
    site_short();
    site_leak();
    sink = leaks;
    if (!strcmp(how, "ABRT"))
        abort();
    if (!strcmp(how, "SEGV"))
        *null_ptr = 1;
    if (!strcmp(how, "RERAISE")) {
        signal(SIGTERM, reraise);
        raise(SIGTERM);
    }
    if (!strcmp(how, "RESETHAND")) {
        struct sigaction sa, back;
        memset(&sa, 0, sizeof sa);
        sa.sa_handler = oneshot;
        sa.sa_flags = SA_RESETHAND;
        sigaction(SIGTERM, &sa, NULL);
        /* The program sees what it set. */
        if (sigaction(SIGTERM, NULL, &back) != 0 || back.sa_handler != oneshot ||
            !(back.sa_flags & SA_RESETHAND)) {
            fputs("killed: sigaction does not show the one-shot handler\n", stderr);
            return 2;
        }
        raise(SIGTERM);
    }
    if (!strcmp(how, "SYSV")) {
        sysv_signal(SIGTERM, oneshot); /* SA_RESETHAND | SA_NODEFER */
        if (signal(SIGTERM, oneshot) != oneshot) {
            fputs("killed: signal does not give back the sysv_signal handler\n", stderr);
            return 2;
        }
        sysv_signal(SIGTERM, oneshot);
        raise(SIGTERM);
    }
    puts("ready");
    fflush(stdout);
    site_loop();
}
