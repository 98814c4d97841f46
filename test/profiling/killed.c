/* A process that a signal ends still leaves its profile: known sites, then a busy loop of
 * allocations (so the signal often lands while the thread is inside the shim) until the test
 * kills it. argv[1] names the signal it will get, which it sets to SIG_DFL first (a shell's
 * background job starts with SIGINT ignored). */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void *volatile sink;
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

int main(int argc, char **argv)
{
    int sig = argc > 1 && !strcmp(argv[1], "INT") ? SIGINT : argc > 1 && !strcmp(argv[1], "HUP") ? SIGHUP : SIGTERM;
    signal(sig, SIG_DFL);
    site_short();
    site_leak();
    sink = leaks;
    puts("ready");
    fflush(stdout);
    site_loop();
}
