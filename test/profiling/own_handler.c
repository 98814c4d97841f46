/* A program with its own handler for the signal given as dump_signal: raises it before and
 * after installing the handler. The first writes a dump (the shim's handler); the handler then
 * replaces the shim's, which the shim says once, and the program's handler gets every signal
 * from then on, as without the shim. Prints how many its handler got. */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>

static volatile sig_atomic_t got;
static void handler(int sig)
{
    (void)sig;
    got++;
}

void *volatile sink;

int main(void)
{
    sink = malloc(100);
    raise(SIGUSR2);
    struct sigaction sa = {0};
    sa.sa_handler = handler;
    sigaction(SIGUSR2, &sa, NULL);
    raise(SIGUSR2);
    raise(SIGUSR2);
    struct sigaction cur;
    sigaction(SIGUSR2, NULL, &cur);
    printf("handler got %d, still installed: %d\n", (int)got, cur.sa_handler == handler);
    free(sink);
    return 0;
}
