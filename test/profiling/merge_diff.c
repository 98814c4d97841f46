/* Allocations whose numbers follow the arguments, for the merge and diff case
 * (test/integration/cases/report-merge-diff.sh):
 *   merge_diff N       site_each: N blocks of 100 bytes, freed, half of them before a dump by
 *                      SIGUSR2 (run with dump_signal=12); site_big: one block of N * 1000
 *                      bytes, leaked; N < 20: site_small_only, 3 blocks of 50 bytes, freed;
 *                      N >= 20: site_large_only, 2 blocks of 70 bytes, leaked.
 *   merge_diff fork N M  forks first; then the parent makes N blocks at site_each and the
 *                      child M, and the child one block of 333 bytes at site_child. */
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

static void *volatile keep[64];
static void *volatile sink;

__attribute__((noinline)) static void site_each(int n)
{
    for (int i = 0; i < n; i++) {
        sink = malloc(100);
        free(sink);
    }
}

__attribute__((noinline)) static void site_big(int n) { keep[0] = malloc((size_t)n * 1000); }

__attribute__((noinline)) static void site_small_only(void)
{
    for (int i = 0; i < 3; i++) {
        sink = malloc(50);
        free(sink);
    }
}

__attribute__((noinline)) static void site_large_only(void)
{
    for (int i = 0; i < 2; i++) /* one call site: one context */
        keep[1 + i] = malloc(70);
}

__attribute__((noinline)) static void site_child(void) { keep[3] = malloc(333); }

__attribute__((noinline)) static int forked(int n, int m)
{
    pid_t pid = fork();
    if (pid < 0)
        return 1;
    site_each(pid == 0 ? m : n); /* one call site: the same stack in both processes */
    if (pid == 0) {
        site_child();
        exit(0);
    }
    int st;
    return waitpid(pid, &st, 0) != pid || !WIFEXITED(st) || WEXITSTATUS(st) != 0;
}

int main(int argc, char **argv)
{
    if (argc == 4 && strcmp(argv[1], "fork") == 0)
        return forked(atoi(argv[2]), atoi(argv[3]));
    if (argc != 2)
        return 2;
    int n = atoi(argv[1]);
    for (int half = 0; half < 2; half++) { /* one call site: one context */
        site_each(half ? n - n / 2 : n / 2);
        if (!half)
            raise(SIGUSR2); /* a numbered dump: a snapshot the exit profile supersedes */
    }
    site_big(n);
    if (n < 20)
        site_small_only();
    else
        site_large_only();
    return 0;
}
