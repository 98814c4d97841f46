/* Starting new images from a (possibly preloaded) process: vfork+exec, posix_spawn of /bin/true
 * and of itself, system(), and finally exec of itself; each new image inherits LD_PRELOAD and
 * must keep working. Prints one fixed line from the final exec'd image. */
#include <errno.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>
#include "testutil.h"

extern char **environ;

/* Work done by every re-executed copy of this program. */
static int child_work(void)
{
    char *s = NULL;
    for (int i = 0; i < 1000; i++) {
        char *q = realloc(s, (size_t)i * 7 + 1);
        if (!q)
            return 20;
        s = q;
        memset(s, 'x', (size_t)i * 7 + 1);
    }
    free(s);
    /* Under the shim the new image must still carry it: LD_PRELOAD is inherited. */
    if (under_shim()) {
        FILE *f = fopen("/proc/self/maps", "r");
        char line[512];
        int found = 0;
        if (!f)
            return 21;
        while (fgets(line, sizeof line, f))
            if (strstr(line, "libheapprof_shim"))
                found = 1;
        fclose(f);
        if (!found)
            return 22;
    }
    return 0;
}

static int status_of(pid_t pid)
{
    int st;
    if (waitpid(pid, &st, 0) != pid)
        return -1;
    return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

int main(int argc, char **argv)
{
    if (argc > 1 && strcmp(argv[1], "child") == 0) {
        int r = child_work();
        return r ? r : 7; /* 7 proves that this image ran */
    }
    if (argc > 1 && strcmp(argv[1], "final") == 0) {
        int r = child_work();
        CHECK(r == 0, "exec'd image: child_work %d", r);
        printf("exec'd image ok\n");
        return 0;
    }

    char self[4096];
    ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
    CHECK(n > 0, "readlink /proc/self/exe");
    self[n] = 0;
    /* keep some heap state alive across the spawns */
    void *keep = malloc(12345);
    CHECK(keep, "malloc");
    pat_fill(keep, 12345, 9);

    for (int i = 0; i < 20; i++) {
        pid_t pid = vfork();
        if (pid == 0) {
            char *const a[] = {"/bin/true", NULL};
            execve(a[0], a, environ);
            _exit(127);
        }
        CHECK(pid > 0, "vfork: errno %d", errno);
        CHECK(status_of(pid) == 0, "vfork+exec /bin/true");

        pid = vfork();
        if (pid == 0) {
            char *const a[] = {self, "child", NULL};
            execve(self, a, environ);
            _exit(127);
        }
        CHECK(pid > 0, "vfork: errno %d", errno);
        int st = status_of(pid);
        CHECK(st == 7, "vfork+exec self: status %d", st);

        char *const t[] = {"/bin/true", NULL};
        CHECK(posix_spawn(&pid, "/bin/true", NULL, NULL, t, environ) == 0, "posix_spawn true");
        CHECK(status_of(pid) == 0, "posix_spawn /bin/true");

        char *const s[] = {self, "child", NULL};
        CHECK(posix_spawn(&pid, self, NULL, NULL, s, environ) == 0, "posix_spawn self");
        st = status_of(pid);
        CHECK(st == 7, "posix_spawn self: status %d", st);
    }
    int r = system("exit 3");
    CHECK(WIFEXITED(r) && WEXITSTATUS(r) == 3, "system(\"exit 3\") returned %#x", r);
    r = system("true");
    CHECK(r == 0, "system(\"true\") returned %#x", r);
    CHECK(pat_ok(keep, 12345, 9), "block corrupted by spawning");
    free(keep);

    fflush(stdout);
    char *const f[] = {self, "final", NULL};
    execv(self, f);
    CHECK(0, "execv self: errno %d", errno);
}
