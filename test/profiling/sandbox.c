/* A worker that sandboxes itself with a seccomp filter, as man-db's and OpenSSH's do: after the
 * filter, any system call the filter does not list kills the process (SIGSYS), and creating a
 * file is refused. The shim must neither be killed nor lose the profile: the file is made
 * before the filter, and the exit profile, with what was allocated after it (in this thread and
 * in one started after it), is written into it.
 * Usage: sandbox prctl | syscall | tsync | evict
 *   prctl:   the filter through prctl(PR_SET_SECCOMP); site_before (100 x 100 bytes), then
 *            site_after (50 x 200) and site_thread (30 x 300, in a thread made after it).
 *   syscall: the same through syscall(SYS_seccomp), as libseccomp does it.
 *   tsync:   syscall(SYS_seccomp) with SECCOMP_FILTER_FLAG_TSYNC: every thread filtered, the
 *            shim's interval-dump thread too (run with dump_interval_ms: its sleep is not in
 *            the list).
 *   evict:   prctl, then site_branches from 2,048 stacks (run with a tiny HIB table: records
 *            are evicted under the filter, so the file is written over from its start).
 * Prints "done" and exits 0. */
#include "branch_sites.h"

#include <errno.h>
#include <linux/audit.h>
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

#define ALLOW(nr) BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, (nr), 0, 1), BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW)

/* What this program itself needs after the filter (memory, threads, writing its output,
 * exiting): the system calls the allocator and glibc's threads make. openat (every file) is
 * refused with EACCES; anything else kills the process. */
static struct sock_filter filter[] = {
    BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, arch)),
    BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, AUDIT_ARCH_X86_64, 1, 0),
    BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_KILL_PROCESS),
    BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
    ALLOW(SYS_read), ALLOW(SYS_write), ALLOW(SYS_close), ALLOW(SYS_fstat), ALLOW(SYS_newfstatat),
    ALLOW(SYS_mmap), ALLOW(SYS_munmap), ALLOW(SYS_mprotect), ALLOW(SYS_madvise), ALLOW(SYS_brk),
    ALLOW(SYS_mremap), ALLOW(SYS_futex), ALLOW(SYS_clone), ALLOW(SYS_clone3),
    ALLOW(SYS_set_robust_list), ALLOW(SYS_rseq), ALLOW(SYS_rt_sigprocmask),
    ALLOW(SYS_rt_sigaction), ALLOW(SYS_rt_sigreturn), ALLOW(SYS_getpid), ALLOW(SYS_clock_gettime), ALLOW(SYS_getcpu), ALLOW(SYS_sched_yield),
    ALLOW(SYS_exit), ALLOW(SYS_exit_group),
    BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_openat, 0, 1),
    BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | EACCES),
    BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_KILL_PROCESS),
};

int main(int argc, char **argv)
{
    if (argc < 2)
        return 2;
    const char *mode = argv[1];
    site_before();
    struct sock_fprog prog = {sizeof filter / sizeof filter[0], filter};
    if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0) {
        perror("PR_SET_NO_NEW_PRIVS");
        return 3;
    }
    int r = strcmp(mode, "syscall") == 0 ? (int)syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, 0, &prog)
            : strcmp(mode, "tsync") == 0
                ? (int)syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, SECCOMP_FILTER_FLAG_TSYNC, &prog)
                : prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog);
    if (r != 0) {
        perror("installing the seccomp filter");
        return 4;
    }
    /* The filter is in place: a file cannot be made now. */
    errno = 0;
    FILE *probe = fopen("/dev/null", "r");
    if (probe || errno != EACCES) {
        printf("the filter does not refuse openat (errno %d)\n", errno);
        return 5;
    }
    if (strcmp(mode, "evict") == 0) {
        for (unsigned b = 0; b < 2048; b++)
            site_branches(b, 11);
    } else {
        site_after();
        pthread_t t;
        if (pthread_create(&t, NULL, thread_main, NULL) != 0 || pthread_join(t, NULL) != 0) {
            printf("thread failed\n");
            return 6;
        }
    }
    printf("done\n");
    return 0;
}
