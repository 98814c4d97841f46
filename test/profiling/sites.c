/* Profile-accuracy test program: allocation sites with known counts, sizes, lifetimes, leaks and
 * threads. test/profiling/check_sites.py compares the JSON report with these numbers, so change
 * both together. Every block escapes through `sink` so no compiler may delete a malloc/free pair. */
#define _GNU_SOURCE
#include <malloc.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "heapprof.h"

#if defined(__clang__)
#define NOINLINE __attribute__((noinline))
#else
#define NOINLINE __attribute__((noinline, noclone))
#endif

void *volatile sink;
static void *leaked[1000];
static void *kept[64];

static void sleep_ms(int ms)
{
    struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
    while (nanosleep(&ts, &ts) != 0)
        ;
}

/* 1000 x malloc(100), each freed at once. */
NOINLINE void site_short(void)
{
    for (int i = 0; i < 1000; i++) {
        void *p = malloc(100);
        sink = p;
        free(p);
    }
}

/* 500 x calloc(10, 30) = 300 bytes, never freed. */
NOINLINE void site_leak(void)
{
    for (int i = 0; i < 500; i++)
        leaked[i] = calloc(10, 30);
    sink = leaked[0];
}

/* 10 x malloc(4096) that live for about 300 ms. */
NOINLINE void site_long_alloc(void)
{
    for (int i = 0; i < 10; i++)
        kept[i] = malloc(4096);
    sink = kept[0];
}

NOINLINE void site_long_free(void)
{
    for (int i = 0; i < 10; i++)
        free(kept[i]);
}

/* 100 x aligned_alloc(64, 256), freed. */
NOINLINE void site_aligned(void)
{
    for (int i = 0; i < 100; i++) {
        void *p = aligned_alloc(64, 256);
        sink = p;
        if (((unsigned long)p & 63) != 0)
            abort();
        free(p);
    }
}

/* 20 x posix_memalign(4096, 1000), never freed. */
NOINLINE void site_memalign_leak(void)
{
    for (int i = 0; i < 20; i++)
        if (posix_memalign(&leaked[500 + i], 4096, 1000) != 0)
            abort();
}

/* A buffer grown by realloc from 16 to 4096 bytes (realloc(NULL, 16), then 8 reallocs), then
 * freed: 9 blocks from this site, sizes 16, 32, ..., 4096 (sum 8176). */
NOINLINE void site_realloc(void)
{
    char *p = realloc(NULL, 16);
    memset(p, 1, 16);
    for (size_t n = 32; n <= 4096; n *= 2) {
        p = realloc(p, n);
        memset(p, 1, n);
    }
    sink = p;
    free(p);
}

/* 4 threads x 1000 x malloc(48), freed: one context, 4000 blocks. */
NOINLINE void site_thread(void)
{
    for (int i = 0; i < 1000; i++) {
        void *p = malloc(48); /* threads share `sink`: free what this thread allocated */
        sink = p;
        free(p);
    }
}

static void *thread_main(void *arg)
{
    (void)arg;
    site_thread();
    return NULL;
}

/* The peak: 10 x 1 MiB live at once, then freed; afterwards 5 x 1 MiB from another site. */
NOINLINE void site_peak(void **v)
{
    for (int i = 0; i < 10; i++)
        v[i] = malloc(1 << 20);
}

NOINLINE void site_after_peak(void **v)
{
    for (int i = 0; i < 5; i++)
        v[i] = malloc(1 << 20);
}

/* In the forked child only: 7 x malloc(777), freed. */
NOINLINE void site_child(void)
{
    for (int i = 0; i < 7; i++) {
        void *p = malloc(777);
        sink = p;
        free(p);
    }
}

int main(int argc, char **argv)
{
    int do_fork = 0, do_signal = 0;
    for (int i = 1; i < argc; i++) {
        do_fork |= !strcmp(argv[i], "fork");
        do_signal |= !strcmp(argv[i], "signal");
    }
    site_short();
    site_leak();
    site_long_alloc();
    sleep_ms(300);
    site_long_free();
    site_aligned();
    site_memalign_leak();
    site_realloc();

    pthread_t th[4];
    for (int i = 0; i < 4; i++)
        pthread_create(&th[i], NULL, thread_main, NULL);
    for (int i = 0; i < 4; i++)
        pthread_join(th[i], NULL);

    void *big[10], *after[5];
    site_peak(big);
    for (int i = 0; i < 10; i++)
        free(big[i]);
    site_after_peak(after);
    for (int i = 0; i < 5; i++)
        free(after[i]);

    /* On-demand dumps: the API, then the dump signal (if the runner set dump_signal=12). */
    if (heapprof_dump && heapprof_dump() != 0)
        fprintf(stderr, "sites: heapprof_dump failed\n");
    if (do_signal)
        raise(SIGUSR2);

    if (do_fork) {
        pid_t pid = fork();
        if (pid == 0) {
            site_child();
            exit(0);
        }
        int st;
        waitpid(pid, &st, 0);
        if (!WIFEXITED(st) || WEXITSTATUS(st) != 0)
            return 1;
    }
    printf("sites done\n");
    return 0;
}
