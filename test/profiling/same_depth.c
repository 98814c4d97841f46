/* Stacks that share their innermost frames at the same stack pointers and part further out:
 * the case the stack walk's caches (the previous walk, the site cache of cfi.c) must tell
 * apart. leaf() is reached through hop() and via() from caller_a() or caller_b() (frames of one size,
 * so via and leaf sit at the same stack pointers either way), from outer_x() or outer_y(),
 * with or without a frame that allocates on its stack (alloca: its frame is found through
 * rbp) in between, in an order that keeps changing, in two threads at once. Every
 * allocation's size names its path (path_size), so a block recorded under another path's
 * stack shows up as a context whose sizes do not fit its frames. It prints how many
 * allocations each path made (outer dyn caller count, both threads together). */
#include <alloca.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define ROUNDS 24000 /* per thread; each picks one of the 12 paths */

void *volatile sink;
char *volatile dyn_sink;

size_t path_size(int outer, int dyn, int caller) { return 16u * (size_t)(1 + outer * 6 + dyn * 2 + caller); }

__attribute__((noinline)) void leaf(size_t n)
{
    void *p = malloc(n);
    sink = p; /* escapes: clang keeps the pair */
    free(p);
}

/* Six frames of one function between via and leaf: the frames that tell the paths apart are
 * further out than a check of the innermost few would look. */
__attribute__((noinline)) void hop(size_t n, int k)
{
    if (k)
        hop(n, k - 1);
    else
        leaf(n);
    __asm__ volatile("");
}

__attribute__((noinline)) void via(size_t n)
{
    hop(n, 5);
    __asm__ volatile("");
}

__attribute__((noinline)) void caller_a(size_t n)
{
    via(n);
    __asm__ volatile("");
}

__attribute__((noinline)) void caller_b(size_t n)
{
    via(n);
    __asm__ volatile("");
}

static void call(int caller, size_t n)
{
    if (caller)
        caller_b(n);
    else
        caller_a(n);
}

__attribute__((noinline)) void dyn_frame(int k, int caller, size_t n)
{
    char *buf = alloca(32 * (size_t)k + 8);
    memset(buf, k, 8);
    dyn_sink = buf;
    call(caller, n);
    __asm__ volatile("");
}

static void path(int dyn, int caller, size_t n)
{
    if (dyn)
        dyn_frame(dyn, caller, n);
    else
        call(caller, n);
}

__attribute__((noinline)) void outer_x(int dyn, int caller)
{
    path(dyn, caller, path_size(0, dyn, caller));
    __asm__ volatile("");
}

__attribute__((noinline)) void outer_y(int dyn, int caller)
{
    path(dyn, caller, path_size(1, dyn, caller));
    __asm__ volatile("");
}

static unsigned counts[2][2][3][2]; /* thread, outer, dyn, caller */

static void *run(void *arg)
{
    unsigned me = (unsigned)(uintptr_t)arg, x = me * 7919u + 1u;
    for (int i = 0; i < ROUNDS;) {
        x = x * 1103515245u + 12345u;
        unsigned r = x >> 16;
        /* runs of one path now and then, as a loop allocating from one place makes */
        int reps = (r & 0x300) ? 1 : 4;
        int outer = (r >> 3) & 1, dyn = (int)((r >> 1) % 3), caller = (int)(r & 1);
        for (int k = 0; k < reps && i < ROUNDS; k++, i++) {
            if (outer)
                outer_y(dyn, caller);
            else
                outer_x(dyn, caller);
            counts[me][outer][dyn][caller]++;
        }
    }
    return NULL;
}

int main(void)
{
    pthread_t t;
    if (pthread_create(&t, NULL, run, (void *)(uintptr_t)1)) {
        perror("pthread_create");
        return 1;
    }
    run((void *)(uintptr_t)0);
    pthread_join(t, NULL);
    for (int o = 0; o < 2; o++)
        for (int d = 0; d < 3; d++)
            for (int c = 0; c < 2; c++)
                printf("%d %d %d %u\n", o, d, c, counts[0][o][d][c] + counts[1][o][d][c]);
    return 0;
}
