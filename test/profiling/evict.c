/* Eviction test: 200 distinct call stacks (recursion depth 1..200), each allocating and freeing
 * `depth` blocks of 10 bytes, several rounds (argument 2; default 3), so a tiny HIB table must evict and the report must
 * merge the evicted records back into exact totals. Midway it closes every descriptor above 2
 * and opens a file of its own, which the shim must never write into. */
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

void *volatile sink;

__attribute__((noinline)) void rec(int depth, int n)
{
    if (depth > 1) {
        rec(depth - 1, n);
        __asm__ volatile("" ::: "memory"); /* no tail call: every level stays a frame */
        return;
    }
    for (int i = 0; i < n; i++) {
        sink = malloc(10);
        free(sink);
    }
}

int main(int argc, char **argv)
{
    const char *own = argc > 1 ? argv[1] : "/tmp/evict-own.txt";
    int rounds = argc > 2 ? atoi(argv[2]) : 3;
    for (int round = 0; round < rounds; round++) {
        for (int d = 1; d <= 200; d++)
            rec(d, d);
        if (round == 0) {
            for (int fd = 3; fd < 1024; fd++)
                close(fd);
            int fd = open(own, O_WRONLY | O_CREAT | O_TRUNC, 0600);
            if (fd < 0 || write(fd, "mine\n", 5) != 5)
                return 1;
            /* keep it open: the next descriptor the shim could mistake for its own */
        }
    }
    FILE *f = fopen(own, "r");
    char buf[64] = {0};
    if (!f || !fgets(buf, sizeof buf, f) || strcmp(buf, "mine\n") != 0 || fgets(buf, sizeof buf, f)) {
        printf("own file corrupted\n");
        return 1;
    }
    printf("evict done\n");
    return 0;
}
