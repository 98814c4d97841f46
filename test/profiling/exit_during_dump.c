/* A thread calls _exit while the main thread's exit writes the final profile: the profile must
 * still be whole. 16384 contexts (every path through 14 levels of two functions, each with two
 * call sites) make the dump take a while; an atexit handler (run before the shim's destructor)
 * tells the thread the exit has begun, and the thread calls _exit a moment later, in the middle
 * of the dump. */
#include <pthread.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

static volatile int exiting;
static void *volatile sink;

static void *left(unsigned mask, int depth);
static void *right(unsigned mask, int depth);

__attribute__((noinline)) static void *left(unsigned mask, int depth)
{
    void *p;
    if (depth == 0)
        return malloc(24);
    if (mask & 1)
        p = left(mask >> 1, depth - 1);
    else
        p = right(mask >> 1, depth - 1);
    __asm__ volatile("" ::: "memory"); /* not a tail call: each level is a frame */
    return p;
}

__attribute__((noinline)) static void *right(unsigned mask, int depth)
{
    void *p;
    if (depth == 0)
        return malloc(40);
    if (mask & 1)
        p = right(mask >> 1, depth - 1);
    else
        p = left(mask >> 1, depth - 1);
    __asm__ volatile("" ::: "memory");
    return p;
}

static void *quitter(void *arg)
{
    (void)arg;
    while (!exiting)
        ;
    struct timespec ts = {0, 2000000};
    nanosleep(&ts, NULL);
    _exit(0);
}

static void on_exit_begins(void) { exiting = 1; }

int main(void)
{
    for (unsigned m = 0; m < 16384; m++) {
        sink = left(m, 14);
        free(sink);
    }
    pthread_t t;
    pthread_create(&t, NULL, quitter, NULL);
    atexit(on_exit_begins);
    return 0;
}
