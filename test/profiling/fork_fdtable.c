/* A forked child that starts a thread: the shim keeps its descriptors at high numbers (1000 or
 * more), and the first one it moves there grows the process's descriptor table. Once the child
 * has two threads, growing it makes the kernel wait for an RCU grace period (14 ms a child on
 * the test machine), so the table must already be grown when the second thread starts. The
 * child starts a thread that waits on a pipe before it allocates, reads FDSize from
 * /proc/self/status meanwhile, and prints it; the test expects at least the shim's numbers.
 * Prints "fdsize N" for the child. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

static void *volatile sink;
static int gate[2];

static void *waiter(void *arg)
{
    (void)arg;
    char c;
    if (read(gate[0], &c, 1) != 1)
        return NULL;
    sink = malloc(64);
    free(sink);
    return NULL;
}

static long fdsize(void)
{
    FILE *f = fopen("/proc/self/status", "r");
    char line[256];
    long n = -1;
    while (f && fgets(line, sizeof line, f))
        if (strncmp(line, "FDSize:", 7) == 0)
            n = strtol(line + 7, NULL, 10);
    if (f)
        fclose(f);
    return n;
}

int main(void)
{
    sink = malloc(100);
    free(sink);
    fflush(stdout);
    pid_t pid = fork();
    if (pid < 0)
        return 2;
    if (pid == 0) {
        sink = malloc(200);
        if (pipe(gate) != 0)
            _exit(2);
        pthread_t th;
        if (pthread_create(&th, NULL, waiter, NULL) != 0)
            _exit(2);
        long n = fdsize();
        if (write(gate[1], "x", 1) != 1)
            _exit(2);
        pthread_join(th, NULL);
        printf("fdsize %ld\n", n);
        fflush(stdout);
        _exit(0);
    }
    int st = 0;
    waitpid(pid, &st, 0);
    return WIFEXITED(st) ? WEXITSTATUS(st) : 3;
}
