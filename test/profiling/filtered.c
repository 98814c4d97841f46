/* A program that starts under a seccomp filter it inherited across exec (as a systemd service
 * with SystemCallFilter=, or man-db's children, do), one that kills the process on mincore
 * and copy_file_range, calls this program never makes but the shim did (the metadata's resident
 * size at every dump, libunwind, spool copies). The shim learns of the filter from
 * /proc/self/status and must keep away from them; before, every profiled process under such a
 * filter was killed at exit. (Walks from an alternate signal stack or a coroutine's stack still
 * ask mincore under such a filter: containers' filters allow it, and those walks keep their
 * depth there.)
 *
 * Usage: filtered       installs the filter (raw system calls, which the shim does not see),
 *                       then execs itself as "filtered child"; exit status 3 when no filter
 *                       can be installed here.
 *        filtered child (under the filter) allocates from known sites:
 *   site_filtered   100 blocks of 100 bytes, freed; 10 of 1000 bytes, leaked
 *   site_thread     30 blocks of 300 bytes, freed, in a second thread
 * and prints "done". */
#include "unseen_filter.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

void *volatile sink;
void *volatile leaks[10];

__attribute__((noinline)) void site_filtered(void)
{
    for (int i = 0; i < 100; i++) {
        sink = malloc(100);
        free(sink);
    }
    for (int i = 0; i < 10; i++)
        leaks[i] = malloc(1000);
}

__attribute__((noinline)) void site_thread(void)
{
    for (int i = 0; i < 30; i++) {
        sink = malloc(300);
        free(sink);
    }
}

static void *thread_main(void *arg)
{
    (void)arg;
    site_thread();
    return NULL;
}

static int child(void)
{
    site_filtered();
    pthread_t t;
    if (pthread_create(&t, NULL, thread_main, NULL) != 0 || pthread_join(t, NULL) != 0) {
        fprintf(stderr, "filtered: thread failed\n");
        return 1;
    }
    printf("done\n");
    return 0;
}

int main(int argc, char **argv)
{
    if (argc > 1 && strcmp(argv[1], "child") == 0)
        return child();
    if (install_unseen_kill_filter((const long[]){SYS_mincore, SYS_copy_file_range}, 2) != 0) {
        fprintf(stderr, "filtered: cannot install a seccomp filter\n");
        return 3;
    }
    execl("/proc/self/exe", argv[0], "child", (char *)NULL);
    perror("filtered: exec");
    return 1;
}
