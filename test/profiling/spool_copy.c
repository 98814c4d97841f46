/* Copies of the spool of evicted HIB records: an API dump (heapprof_dump) and forked children
 * each start their profile with every record the process had evicted so far. Run with a tiny
 * HIB table: 16 threads in turn allocate once from each of 2,048 stacks (site_branches, 64
 * bytes) and exit; their caches, flushed at exit, evict ~30,000 records into the spool (5 MB).
 * Then the API dump, then two forked children that allocate nothing from site_branches and end
 * with exit(). Every profile (the dump, both children's, the parent's) must hold the same
 * site_branches numbers: 2,048 contexts, 32,768 blocks.
 *
 * Usage: spool_copy plain | filtered. filtered first installs (with a raw system call, which the
 * shim does not see) a seccomp filter that kills the process on copy_file_range, as a sandbox
 * that lists only the calls it expects may: the shim must see the filter (/proc/self/status)
 * and make its copies by reading and writing. Exit
 * status 3 when no filter can be installed. Prints "done". */
#include "branch_sites.h"
#include "heapprof.h"
#include "unseen_filter.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

static void *thread_main(void *arg)
{
    (void)arg;
    for (unsigned b = 0; b < 2048; b++)
        site_branches(b, 11);
    return NULL;
}

int main(int argc, char **argv)
{
    if (argc != 2 || (strcmp(argv[1], "plain") != 0 && strcmp(argv[1], "filtered") != 0)) {
        fprintf(stderr, "usage: spool_copy plain | filtered\n");
        return 2;
    }
    if (strcmp(argv[1], "filtered") == 0 && install_unseen_kill_filter((const long[]){SYS_copy_file_range}, 1) != 0) {
        fprintf(stderr, "spool_copy: cannot install a seccomp filter\n");
        return 3;
    }
    for (int i = 0; i < 16; i++) {
        pthread_t t;
        if (pthread_create(&t, NULL, thread_main, NULL) != 0 || pthread_join(t, NULL) != 0) {
            fprintf(stderr, "spool_copy: thread %d failed\n", i);
            return 1;
        }
    }
    if (heapprof_dump && heapprof_dump() != 0) {
        fprintf(stderr, "spool_copy: heapprof_dump failed\n");
        return 1;
    }
    for (int k = 0; k < 2; k++) {
        fflush(stdout);
        pid_t p = fork();
        if (p < 0)
            return 1;
        if (p == 0) {
            sink = malloc(10);
            free(sink);
            exit(0);
        }
        int st;
        if (waitpid(p, &st, 0) != p || !WIFEXITED(st) || WEXITSTATUS(st) != 0) {
            fprintf(stderr, "spool_copy: child %d failed\n", k);
            return 1;
        }
    }
    printf("done\n");
    return 0;
}
