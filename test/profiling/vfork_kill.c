/* A vfork child killed by a signal while it allocates (undefined by POSIX, done anyway): the
 * child shares its parent's memory, so the shim must not leave anything there that makes the
 * parent act on the child's signal. Another thread of the parent sends SIGTERM to the child;
 * the parent must carry on and exit 0 with an ordinary exit profile, still seeing SIGTERM at
 * SIG_DFL. Prints the child's fate and the parent's SIGTERM disposition. */
#define _GNU_SOURCE
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

void *volatile sink;
static volatile pid_t child_pid;

static void *killer(void *arg)
{
    (void)arg;
    while (!child_pid)
        ;
    struct timespec ts = {0, 20 * 1000 * 1000};
    nanosleep(&ts, NULL);
    kill(child_pid, SIGTERM);
    return NULL;
}

__attribute__((noinline)) void site_after(void)
{
    for (int i = 0; i < 100; i++) {
        sink = malloc(64);
        free(sink);
    }
}

int main(void)
{
    pthread_t t;
    pthread_create(&t, NULL, killer, NULL);
    pid_t pid = vfork();
    if (pid == 0) {
        child_pid = getpid();
        for (;;) { /* until the signal comes: most of the time inside the shim */
            sink = malloc(32);
            free(sink);
        }
    }
    int st;
    waitpid(pid, &st, 0);
    pthread_join(t, NULL);
    site_after();
    printf("child %s %d\n", WIFSIGNALED(st) ? "killed by" : "exited", WIFSIGNALED(st) ? WTERMSIG(st) : WEXITSTATUS(st));
    struct sigaction sa;
    sigaction(SIGTERM, NULL, &sa);
    printf("parent TERM %s\n", sa.sa_handler == SIG_DFL ? "SIG_DFL" : "handler");
    return 0;
}
