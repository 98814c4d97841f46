/* _exit in a vfork child: the child runs on its parent's memory, so the shim must not write a
 * profile there (it would mark the parent's exit profile as written and dump the parent's
 * state under the child's pid). The parent's own exit profile counts everything. */
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

static void *volatile sink;

__attribute__((noinline)) static void site_before(void)
{
    void *p = malloc(100);
    sink = p;
    free(p);
}

__attribute__((noinline)) static void site_after(void)
{
    void *p = malloc(200);
    sink = p;
    free(p);
}

int main(void)
{
    for (int i = 0; i < 100; i++)
        site_before();
    pid_t child = vfork();
    if (child == 0)
        _exit(5);
    int status = 0;
    waitpid(child, &status, 0);
    for (int i = 0; i < 50; i++)
        site_after();
    printf("vfork_exit: child status %d\n", WEXITSTATUS(status));
    return WEXITSTATUS(status) == 5 ? 0 : 1;
}
