/* Threads that keep evicting HIB records (2,048 stacks, run with a tiny HIB table) while the
 * main thread forks N times (default 200); each child allocates from the same sites and ends.
 * An eviction takes its thread's lock, a table set's and then the spool's; fork took the
 * spool's first and then every thread's, and the two waited for each other for ever (rustc
 * hung so). Prints "done" when every child was waited for. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>
void *volatile sink;
static volatile int stop;
__attribute__((noinline)) void site_branches(unsigned bits, int level);
__attribute__((noinline)) static void left(unsigned bits, int level) { site_branches(bits, level); __asm__ volatile(""); }
__attribute__((noinline)) static void right(unsigned bits, int level) { site_branches(bits, level); __asm__ volatile(""); }
__attribute__((noinline)) void site_branches(unsigned bits, int level)
{
    if (level == 0) { void *p = malloc(64); sink = p; free(p); return; }
    if (bits & 1) right(bits >> 1, level - 1); else left(bits >> 1, level - 1);
}
static void *worker(void *a)
{
    unsigned b = (unsigned)(long)a * 7919;
    while (!stop)
        site_branches(b++, 10);
    return NULL;
}
int main(int argc, char **argv)
{
    int n = argc > 1 ? atoi(argv[1]) : 200;
    pthread_t t[3];
    for (long i = 0; i < 3; i++) pthread_create(&t[i], NULL, worker, (void *)i);
    for (int i = 0; i < n; i++) {
        pid_t c = fork();
        if (c == 0) { site_branches(i, 10); _exit(0); }
        waitpid(c, NULL, 0);
    }
    stop = 1;
    for (int i = 0; i < 3; i++) pthread_join(t[i], NULL);
    puts("done");
    return 0;
}
