/* The shim, and libunwind under unwinder=libunwind, keep their descriptors out of the numbers a
 * program expects its own files to get: after allocations (stack walks, libunwind's start-up),
 * and after the program closed every descriptor above stderr and allocated again, its next
 * open() still gets 3 and nothing else is open below 100 (the shim's own descriptors sit at 1000 or
 * more, or three quarters of a smaller limit). The program first execs itself with
 * every descriptor above stderr closed (a test harness or make may leave some open), then checks.
 * Exits 1 with a line per problem. */
#define _GNU_SOURCE
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

static void *volatile sink;
static int problems;

__attribute__((noinline)) static void site_fd(size_t n)
{
    for (size_t i = 0; i < n; i++) {
        sink = malloc(24 + i % 100);
        free(sink);
    }
}

/* Any descriptor open in [3, 100) is a problem unless it is `allowed`. */
static void check_free(const char *when, int allowed)
{
    for (int fd = 3; fd < 100; fd++) {
        if (fd == allowed || fcntl(fd, F_GETFD) < 0)
            continue;
        char path[64], target[PATH_MAX];
        snprintf(path, sizeof path, "/proc/self/fd/%d", fd);
        ssize_t n = readlink(path, target, sizeof target - 1);
        target[n > 0 ? n : 0] = '\0';
        printf("%s: descriptor %d is open (%s)\n", when, fd, target);
        problems++;
    }
}

static void close_from_3(void)
{
    for (int fd = 3; fd < 1024; fd++)
        close(fd);
}

int main(int argc, char **argv)
{
    if (argc < 2 || strcmp(argv[1], "clean") != 0) {
        close_from_3();
        execl("/proc/self/exe", argv[0], "clean", (char *)NULL);
        perror("execl");
        return 1;
    }
    check_free("at start", -1);
    site_fd(1000);
    check_free("after allocating", -1);
    int fd = open("/dev/null", O_RDONLY);
    if (fd != 3) {
        printf("first open() got %d, expected 3\n", fd);
        problems++;
    }
    close(fd);
    /* A daemon's start: close everything, then reopen its own files. */
    close_from_3();
    site_fd(1000);
    fd = open("/dev/null", O_RDONLY);
    if (fd != 3) {
        printf("open() after closing everything got %d, expected 3\n", fd);
        problems++;
    }
    site_fd(1000);
    check_free("after closing everything and allocating", fd);
    if (fcntl(fd, F_GETFD) < 0) {
        printf("descriptor %d, the program's /dev/null, was closed behind its back\n", fd);
        problems++;
    }
    printf("%s\n", problems ? "FAILED" : "fd numbers ok");
    return problems != 0;
}
