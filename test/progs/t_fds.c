/* Programs that manage descriptors themselves: a child closes every descriptor above 2 (as
 * daemons do), opens its own files (which reuse the low numbers), allocates heavily and exits
 * with the files still open; the parent then checks that the files hold exactly what the child
 * wrote, so nothing else wrote into them (e.g. profile data through a descriptor number the
 * shim remembered). Another child exits with RLIMIT_NOFILE too low to open anything. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include "testutil.h"

#define NFILES 6
#define LINES 2000

static char dir[64];

static void path_of(char *buf, size_t n, int i)
{
    snprintf(buf, n, "%s/f%d", dir, i);
}

static void churn(int rounds)
{
    for (int r = 0; r < rounds; r++) {
        void *p = malloc(16 + (size_t)(r % 4000));
        void *q = malloc(100000 + (size_t)r);
        free(p);
        free(q);
    }
}

static void writer_child(void)
{
    closefrom(3);
    int fds[NFILES];
    char path[128], line[64];
    for (int i = 0; i < NFILES; i++) {
        path_of(path, sizeof path, i);
        fds[i] = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
        if (fds[i] < 0)
            _exit(20);
    }
    for (int l = 0; l < LINES; l++) {
        churn(20);
        for (int i = 0; i < NFILES; i++) {
            int n = snprintf(line, sizeof line, "file %d line %d\n", i, l);
            if (write(fds[i], line, (size_t)n) != n)
                _exit(21);
        }
    }
    exit(0); /* files left open on purpose */
}

static void nofile_child(void)
{
    struct rlimit rl = {3, 3};
    if (setrlimit(RLIMIT_NOFILE, &rl) != 0)
        _exit(30);
    closefrom(3);
    churn(20000);
    exit(0);
}

static int run_child(void (*fn)(void))
{
    fflush(stdout);
    pid_t pid = fork();
    CHECK(pid >= 0, "fork");
    if (pid == 0)
        fn();
    int st;
    CHECK(waitpid(pid, &st, 0) == pid, "waitpid");
    return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

int main(void)
{
    strcpy(dir, "/tmp/hp-t_fds-XXXXXX");
    CHECK(mkdtemp(dir), "mkdtemp");
    int st = run_child(writer_child);
    CHECK(st == 0, "writer child: status %d", st);

    char path[128], expect[64];
    for (int i = 0; i < NFILES; i++) {
        path_of(path, sizeof path, i);
        FILE *f = fopen(path, "r");
        CHECK(f, "fopen %s", path);
        char *line = NULL;
        size_t cap = 0;
        ssize_t n;
        int l = 0;
        while ((n = getline(&line, &cap, f)) > 0) {
            snprintf(expect, sizeof expect, "file %d line %d\n", i, l);
            CHECK(strcmp(line, expect) == 0, "file %d line %d is \"%.40s\": something else wrote "
                  "into the program's file", i, l, line);
            l++;
        }
        CHECK(l == LINES, "file %d has %d lines, expected %d", i, l, LINES);
        free(line);
        fclose(f);
        unlink(path);
    }
    rmdir(dir);

    st = run_child(nofile_child);
    CHECK(st == 0, "child with RLIMIT_NOFILE=3: status %d", st);
    return 0;
}
