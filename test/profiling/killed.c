/* A process that a signal ends still leaves its profile: known sites, then a busy loop of
 * allocations (so the signal often lands while the thread is inside the shim) until the test
 * kills it. argv[1] names the signal it will get, which it sets to SIG_DFL first (a shell's
 * background job starts with SIGINT ignored); ABRT and SEGV make it end itself after the
 * sites instead, by abort() and by a write through a null pointer, and RERAISE by SIGTERM to
 * a handler of its own that restores SIG_DFL and raises the signal again. */
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
    puts("ready");
    fflush(stdout);
    site_loop();
}
