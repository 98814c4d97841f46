/* A program that ends with quick_exit (no destructors, no atexit handlers): its profile must
 * still be written, after the program's own at_quick_exit handlers (whose frees count), and the
 * exit status kept. 100 blocks of 100 bytes leaked, 50 of 200 bytes freed by an at_quick_exit
 * handler. */
#include <stdio.h>
#include <stdlib.h>

static void *volatile keep[200];

__attribute__((noinline)) void site_before(void)
{
    for (int i = 0; i < 100; i++)
        keep[i] = malloc(100);
}

__attribute__((noinline)) void site_after(void)
{
    for (int i = 0; i < 50; i++)
        keep[100 + i] = malloc(200);
}

static void handler(void)
{
    for (int i = 100; i < 150; i++)
        free(keep[i]);
    fputs("handler ran\n", stderr);
}

int main(void)
{
    at_quick_exit(handler);
    site_before();
    site_after();
    quick_exit(3);
}
