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
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <pthread.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
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

#define KILL_ON(nr) BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, (nr), 0, 1), BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_KILL_PROCESS)

int main(int argc, char **argv)
{
    if (argc > 1 && strcmp(argv[1], "child") == 0)
        return child();
    struct sock_filter prog[] = {
        BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
        KILL_ON(SYS_mincore),
        KILL_ON(SYS_copy_file_range),
        BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
    };
    struct sock_fprog fp = {sizeof prog / sizeof prog[0], prog};
#if defined(__x86_64__)
    /* With the syscall instruction itself: the shim interposes prctl and syscall(3), and would
     * see a filter installed through them. prctl wants its unused arguments zero. */
    long r;
    register long r10 __asm__("r10") = 0;
    register long r8 __asm__("r8") = 0;
    __asm__ volatile("syscall" : "=a"(r) : "0"((long)SYS_prctl), "D"((long)PR_SET_NO_NEW_PRIVS), "S"(1L),
                     "d"(0L), "r"(r10), "r"(r8) : "rcx", "r11", "memory");
    if (r == 0)
        __asm__ volatile("syscall" : "=a"(r) : "0"((long)SYS_prctl), "D"((long)PR_SET_SECCOMP),
                         "S"((long)SECCOMP_MODE_FILTER), "d"(&fp), "r"(r10), "r"(r8) : "rcx", "r11", "memory");
    if (r != 0) {
        fprintf(stderr, "filtered: cannot install a seccomp filter (%ld)\n", r);
        return 3;
    }
#else
    (void)fp;
    fprintf(stderr, "filtered: x86_64 only\n");
    return 3;
#endif
    execl("/proc/self/exe", argv[0], "child", (char *)NULL);
    perror("filtered: exec");
    return 1;
}
