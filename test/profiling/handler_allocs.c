/* A signal handler that allocates while the program allocates at full speed: most of its
 * calls interrupt the shim in the middle of recording one of main's allocations or frees. Each
 * must be recorded all the same, at its own site, with its free (in the handler, or later in
 * main) matched to it.
 *
 * Every tick of a 200 us timer the handler makes three blocks: one it keeps (site_keep, 72
 * bytes, live at exit), one it frees at once (site_temp, 56 bytes) and one it hands to main
 * (site_pass, 88 bytes), which main frees. main allocates and frees 40-byte blocks from
 * site_main meanwhile. Prints "TICKS MAIN_BLOCKS" for the checker (check_sites.py handler).
 * Run it over bump_malloc.c: the handler calls malloc while main may be inside it, which only an
 * async-signal-safe allocator survives (glibc's deadlocks, with or without the shim). */
#define _GNU_SOURCE
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/time.h>
#include <time.h>

#define TICKS 400

static void *kept[TICKS];
static volatile int ticks;
static void *volatile passed; /* the handler's block for main to free */
void *volatile sink;

/* The store after each call keeps the compilers from making it a tail call (the site's frame
 * must be on the stack). */
__attribute__((noinline)) void *site_keep(void) { void *p = malloc(72); sink = p; return p; }
__attribute__((noinline)) void *site_temp(void) { void *p = malloc(56); sink = p; return p; }
__attribute__((noinline)) void *site_pass(void) { void *p = malloc(88); sink = p; return p; }
__attribute__((noinline)) void *site_main(void) { void *p = malloc(40); sink = p; return p; }

static void on_tick(int sig)
{
    (void)sig;
    if (ticks >= TICKS)
        return;
    kept[ticks] = site_keep();
    void *t = site_temp();
    sink = t;
    free(t);
    /* main takes the previous one with an exchange: one instruction, so never half done. */
    void *old = __atomic_exchange_n(&passed, site_pass(), __ATOMIC_SEQ_CST);
    free(old);
    ticks++;
}

int main(void)
{
    /* The thread's first allocation, before the timer runs: the shim sets the thread up then
     * (and loads libunwind, with unwinder=libunwind), and a handler that interrupts its own work
     * is not recorded (docs/DESIGN.md). */
    free(site_main());
    struct sigaction sa = {.sa_handler = on_tick, .sa_flags = SA_RESTART};
    sigaction(SIGALRM, &sa, NULL);
    struct itimerval it = {{0, 200}, {0, 200}};
    setitimer(ITIMER_REAL, &it, NULL);
    long blocks = 0;
    struct timespec t0, now;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    while (ticks < TICKS) {
        for (int i = 0; i < 1000; i++) {
            void *p = site_main();
            sink = p;
            free(p);
            blocks++;
            free(__atomic_exchange_n(&passed, NULL, __ATOMIC_SEQ_CST));
        }
        clock_gettime(CLOCK_MONOTONIC, &now);
        if (now.tv_sec - t0.tv_sec > 60)
            return 2;
    }
    it.it_value.tv_usec = it.it_interval.tv_usec = 0;
    setitimer(ITIMER_REAL, &it, NULL);
    free(__atomic_exchange_n(&passed, NULL, __ATOMIC_SEQ_CST));
    printf("%d %ld\n", ticks, blocks + 1);
    return 0;
}
