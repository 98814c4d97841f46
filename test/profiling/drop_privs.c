/* A server's way of handing work to an unprivileged process: run as root, fork, and the child
 * becomes nobody (setgroups, setgid, setuid) or moves into another root (chroot), then
 * allocates and ends. The child can then no longer create its profile in the (root-only)
 * output directory; the profile must exist all the same, with the child's numbers.
 * Usage: drop_privs exit | exec | evict | chroot DIR
 *   exit:   the child exits: its exit profile has site_before (100 blocks of 100 bytes, from
 *           before the fork) and site_after (50 blocks of 200 bytes, after the change).
 *   exec:   the child execs /bin/true after the change: its provisional profile (made before
 *           the change) stays, with site_before only.
 *   evict:  like exit, but site_after allocates from 2,048 stacks (run with a tiny HIB table,
 *           so the profile file is first provisional and then the spool of evicted records).
 *   chroot: like exit, with chroot(DIR) instead of the user change. */
#include "branch_sites.h"

#include <grp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

int main(int argc, char **argv)
{
    if (argc < 2)
        return 2;
    const char *mode = argv[1];
    site_before();
    pid_t c = fork();
    if (c == 0) {
        if (strcmp(mode, "chroot") == 0) {
            if (argc < 3 || chroot(argv[2]) != 0 || chdir("/") != 0) {
                perror("chroot");
                _exit(3);
            }
        } else if (setgroups(0, NULL) != 0 || setgid(65534) != 0 || setuid(65534) != 0) {
            perror("drop privileges");
            _exit(3);
        }
        if (strcmp(mode, "exec") == 0) {
            execl("/bin/true", "true", (char *)NULL);
            _exit(127);
        }
        if (strcmp(mode, "evict") == 0)
            for (unsigned b = 0; b < 2048; b++)
                site_branches(b, 11);
        else
            site_after();
        exit(0);
    }
    int st = 0;
    waitpid(c, &st, 0);
    printf("child %d status %d\n", (int)c, WIFEXITED(st) ? WEXITSTATUS(st) : -1);
    return 0;
}
