/* Makes one thread and sets one handler, allocating in both: what a preloaded spy library
 * (spy_preload.c) should count, and no more, with the shim under it. */
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static void *volatile keep;

static void on_usr1(int sig) { (void)sig; }

static void *worker(void *arg)
{
    keep = malloc(100);
    free(keep);
    return arg;
}

int main(void)
{
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_usr1;
    if (sigaction(SIGUSR1, &sa, NULL) != 0)
        return 1;
    pthread_t th;
    if (pthread_create(&th, NULL, worker, NULL) != 0 || pthread_join(th, NULL) != 0)
        return 1;
    keep = malloc(200);
    free(keep);
    /* time for the shim's interval dumps (dump_interval_ms) to come */
    struct timespec ts = {0, 50 * 1000 * 1000};
    nanosleep(&ts, NULL);
    puts("done");
    return 0;
}
