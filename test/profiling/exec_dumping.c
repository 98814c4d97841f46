/* A process that execs while its interval thread writes a dump. It makes 4,096 contexts (a
 * binary tree of calls twelve deep, one live block at each leaf), so that a dump takes a while,
 * lets dump_interval_ms=1 write dumps back to back for ROUNDS x 3 ms (replacing a block every
 * half millisecond meanwhile, so that every tick has a change to write), then execs itself with
 * the argument "done" (that image allocates a little and exits). The exec cuts the dump in
 * progress off wherever it is: no numbered dump (p.PID.hpf.N) may be left without its end;
 * what was cut off must be left under another name (N.tmp). Usage: exec_dumping [ROUNDS] */
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define LEVELS 12

void *volatile leaves[1 << LEVELS];

static void grow(int level, unsigned path);

__attribute__((noinline)) static void left(int level, unsigned path)
{
    grow(level + 1, path << 1);
    __asm__ volatile("" ::: "memory"); /* not a tail call: the frame stays in the stack */
}

__attribute__((noinline)) static void right(int level, unsigned path)
{
    grow(level + 1, (path << 1) | 1);
    __asm__ volatile("" ::: "memory");
}

__attribute__((noinline)) static void grow(int level, unsigned path)
{
    if (level == LEVELS) {
        leaves[path] = malloc(24 + path % 40);
        return;
    }
    left(level, path);
    right(level, path);
    __asm__ volatile("" ::: "memory");
}

int main(int argc, char **argv)
{
    if (argc > 1 && strcmp(argv[1], "done") == 0) {
        leaves[0] = malloc(100);
        return 0;
    }
    int rounds = argc > 1 ? atoi(argv[1]) : 1;
    grow(0, 0);
    /* A block replaced every half millisecond: every tick finds a change, so it writes a dump
     * (a tick at which nothing changed writes none). */
    struct timespec ts = {0, 500 * 1000};
    for (int i = 0; i < rounds * 6; i++) {
        free(leaves[0]);
        leaves[0] = malloc(24 + (size_t)i % 40);
        nanosleep(&ts, NULL);
    }
    char *args[] = {argv[0], "done", NULL};
    execv("/proc/self/exe", args);
    return 1;
}
