/* One idempotent, single-flight init in a fixed order: options, backend, profiler, atfork,
 * ready. It runs from whichever comes first, the first allocation or the library constructor;
 * while it runs, every allocation (its own dlsym ones, other threads') is served by the
 * bootstrap arena, so nothing ever waits for it. */
#include "hp.h"
#include "backend.h"
#include "patch.h"
#include "meta.h"
#include "header.h"
#include "options.h"
#include "retired.h"

#include <fcntl.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/syscall.h>
#include <unistd.h>

int hp_init_state;
int hp_passthrough;
int hp_profiling;
int hp_realloc_zero_frees = 1;
__thread struct hp_tls hp_tls __attribute__((tls_model("initial-exec")));

extern char **environ;

/* Find HEAPPROF_OPTIONS without getenv (which is not guaranteed to be usable this early):
 * environ when libc has set it, /proc/self/environ otherwise. Ignored for setuid programs. */
static const char *find_options(char *buf, size_t cap)
{
    static const char key[] = "HEAPPROF_OPTIONS=";
    const size_t klen = sizeof key - 1;
    if (getauxval(AT_SECURE))
        return NULL;
    if (environ) {
        for (char **e = environ; *e; e++)
            if (!hp_strncmp(*e, key, klen))
                return *e + klen;
        return NULL;
    }
    int fd = (int)hp_sys_open("/proc/self/environ", O_RDONLY | O_CLOEXEC, 0);
    if (fd < 0)
        return NULL;
    long n = syscall(SYS_read, fd, buf, cap - 1);
    syscall(SYS_close, fd);
    if (n <= 0)
        return NULL;
    buf[n] = 0;
    for (long i = 0; i < n;) {
        if (!hp_strncmp(buf + i, key, klen))
            return buf + i + klen;
        i += (long)hp_strlen(buf + i) + 1;
    }
    return NULL;
}

static void fork_prepare(void)
{
    hp_tls.depth++;
    hp_dump_fork_prepare();
    if (hp_profiling)
        hp_profile_fork_prepare();
    hp_meta_fork_prepare();
}

static void fork_parent(void)
{
    hp_meta_fork_parent();
    if (hp_profiling)
        hp_profile_fork_parent();
    hp_dump_fork_parent();
    hp_leave();
}

static void fork_child(void)
{
    hp_meta_fork_child();
    hp_stack_fork_child();
    hp_retired_fork_child();
    if (hp_profiling) {
        hp_dump_fork_child(); /* first: the child's spool must exist before anything evicts */
        hp_profile_fork_child();
    }
    hp_tls.depth--;
    if (hp_profiling)
        hp_dump_fork_child_threads();
}

static void do_init(void)
{
    static char envbuf[65536];
    hp_log_init();
    hp_options_parse(&hp_opt, find_options(envbuf, sizeof envbuf));
    if (hp_opt.help)
        hp_options_print(&hp_opt, 2);

    const uint8_t *rnd = (const uint8_t *)getauxval(AT_RANDOM);
    uint64_t seed = 0x5eed;
    if (rnd)
        hp_memcpy(&seed, rnd + 8, sizeof seed); /* the first 8 bytes seed the stack protector */
    hp_secret = hp_mix64(seed ^ (uint64_t)(uintptr_t)&seed);

    if (hp_backend_init(hp_opt.backend, hp_self_malloc_addr(), (int)hp_opt.patch_allocator,
                        &hp_passthrough) != 0) {
        hp_error("no usable allocator found; aborting");
        _exit(127);
    }
    if (hp_passthrough) {
        hp_warn("another allocator (%s) comes before the shim and serves malloc, and it was "
                "not patched (%s); the shim only forwards to it and records nothing",
                hp_be.object, hp_be.why_not_patched ? hp_be.why_not_patched : "?");
        return;
    }
    if (hp_opt.patch_prefixed && !hp_be.in_front) {
        const char *why = "?";
        int n = hp_patch_prefixed("_rjem_", &why);
        if (n > 0)
            hp_info("patched %d entry points of the jemalloc linked in under the _rjem_ prefix: "
                    "what the program allocates through them now comes from %s", n, hp_be.object);
        else if (n < 0)
            hp_warn("patch_prefixed: the jemalloc linked in under the _rjem_ prefix stays unpatched "
                    "(%s): its allocations are not in the profile", why);
    }
    /* Mirror what the backend does with realloc(p, 0). */
    if (hp_be.realloc) {
        void *t = hp_be.malloc(1);
        void *r = t ? hp_be.realloc(t, 0) : NULL;
        hp_realloc_zero_frees = t && !r;
        if (r)
            hp_be.free(r);
    }
    hp_clock_init();
    hp_meta_init(hp_opt.metadata_budget_mb << 20);
    if (hp_opt.profile) {
        hp_stack_init();
        hp_profile_init();
        hp_dump_init();
    }
    pthread_atfork(fork_prepare, fork_parent, fork_child);
}

int hp_init_slow(void)
{
    int expected = HP_INIT_NONE;
    if (!__atomic_compare_exchange_n(&hp_init_state, &expected, HP_INIT_RUNNING, 0,
                                     __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE))
        return expected == HP_INIT_DONE;
    hp_tls.depth++;
    do_init();
    hp_tls.depth--;
    __atomic_store_n(&hp_init_state, HP_INIT_DONE, __ATOMIC_RELEASE);
    return 1;
}

#ifndef HP_UNIT_TEST
/* quick_exit runs at_quick_exit handlers and ends in glibc's own _exit (not the interposed
 * one): the profile is written by a handler registered before the program's, so it runs after
 * them and their frees count. */
static void on_quick_exit(void)
{
    if (hp_profiling)
        hp_dump_at__exit();
}

/* After libc's own constructors: work that needs a working libc (dlopen, threads, signals). */
__attribute__((constructor(101))) static void hp_constructor(void)
{
    hp_ready();
    hp_signals_resolve(); /* the interposed signal functions never look glibc's up later */
    if (hp_passthrough || !hp_profiling)
        return;
    hp_tls.depth++;
    hp_stack_late_init();
    hp_dump_late_init();
    at_quick_exit(on_quick_exit);
    hp_leave();
}

/* The preloaded library is finalised after the program and the libraries it loaded, so frees
 * made by their destructors and atexit handlers are in the profile. */
__attribute__((destructor(101))) static void hp_destructor(void)
{
    if (hp_init_state == HP_INIT_DONE && hp_profiling)
        hp_dump_at_exit();
}
#endif
