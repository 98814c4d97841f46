/* One idempotent, single-flight init in a fixed order: options, backend, profiler, atfork,
 * ready. It runs from whichever comes first, the first allocation or the library constructor;
 * while it runs, every allocation (its own dlsym ones, other threads') is served by the
 * bootstrap arena, so nothing ever waits for it. */
#include "core/core.h"
#include "core/core_internal.h"
#include "profile/profile.h"
#include "unwind/unwind.h"
#include "dump/dump.h"
#include "backend/backend.h"
#include "shadow/shadow.h"

#include "header_internal.h"
#include "core/pool_internal.h"
#include "rt/rt.h"

#include <fcntl.h>
#include <link.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

int hp_init_state;
int hp_passthrough;
int hp_realloc_zero_frees = 1;

extern char **environ;

const char *hp_env_value(const char *name)
{
    size_t n = hp_strlen(name);
    for (char **e = environ; e && *e; e++)
        if (!hp_strncmp(*e, name, n) && (*e)[n] == '=')
            return *e + n + 1;
    return NULL;
}

/* Find HEAPPROF_OPTIONS without getenv (which is not guaranteed to be usable this early):
 * environ when it is set (by libc's initialiser, or by the shim's constructor, which runs
 * before it), /proc/self/environ otherwise (an allocation before any initialiser). Ignored for
 * setuid programs. */
static const char *find_options(char *buf, size_t cap)
{
    static const char key[] = "HEAPPROF_OPTIONS=";
    const size_t klen = sizeof key - 1;
    if (getauxval(AT_SECURE))
        return NULL;
    if (environ)
        return hp_env_value("HEAPPROF_OPTIONS");
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
    hp_stack_fork_prepare(); /* first: waits for other threads, so before taking locks they need */
    /* The pool table's shard locks before the profiler's: a pool report takes them with none
     * of the profiler's held (core/pool.c). */
    hp_ptab_fork_prepare();
    hp_dump_fork_prepare();
    if (hp_profiling)
        hp_profile_fork_prepare();
    hp_dump_fork_prepare_spool(); /* after the threads' and the table's locks (dump/triggers.c) */
    hp_shadow_live_fork_prepare(); /* a dump walks the registry with the spool lock held */
    hp_meta_fork_prepare();
}

static void fork_parent(void)
{
    hp_stack_fork_parent();
    hp_meta_fork_parent();
    hp_shadow_live_fork_parent();
    if (hp_profiling)
        hp_profile_fork_parent();
    hp_dump_fork_parent();
    hp_ptab_fork_parent();
    hp_leave();
}

static void fork_child(void)
{
    hp_meta_fork_child();
    hp_ptab_fork_child();
    hp_shadow_live_fork_child();
    hp_stack_fork_child();
    hp_retired_fork_child();
    /* fork_prepare took the dump and spool locks with profiling off too (profile=0, tables
     * that did not fit): without this a child's own fork waited for them for ever. */
    hp_dump_fork_child_locks();
    if (hp_profiling) {
        hp_dump_fork_child(); /* first: the child's spool must exist before anything evicts */
        hp_profile_fork_child();
    }
    hp_tls.depth--;
    hp_start_interval_thread(); /* (after every fork_child handler: it makes the child two threads) */
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
                        (int)hp_opt.headerless, &hp_passthrough) != 0) {
        hp_error("no usable allocator found; aborting");
        hp_exit(127);
    }
    hp_mi_init();
    if (hp_passthrough && hp_be.other_shim[0]) {
        char self[256] = "?";
        hp_object_name(hp_self_malloc_addr(), self, sizeof self);
        hp_warn("another copy of heapprof's shim (%s) comes before this one (%s) and profiles "
                "the process; this one only forwards to %s", hp_be.other_shim, self, hp_be.object);
        return;
    }
    if (hp_passthrough && hp_be.headerless) {
        /* Its pointers are its own: a free through any of its paths is harmless. */
        hp_headerless = 1;
        hp_profile_headerless = 1;
        if (hp_be.headerless == 2)
            hp_info("another allocator (%s) comes before the shim and serves malloc; its blocks "
                    "are profiled without headers (%s)", hp_be.object,
                    hp_be.why_not_patched ? hp_be.why_not_patched : "?");
        else
            hp_warn("another allocator (%s) comes before the shim and serves malloc, and it "
                    "cannot be patched completely (%s); its blocks are profiled without headers "
                    "(frees through paths past its entry points are seen when their address is "
                    "reused)", hp_be.object, hp_be.why_not_patched ? hp_be.why_not_patched : "?");
    } else if (hp_passthrough) {
        hp_warn("another allocator (%s) comes before the shim and serves malloc, and it was "
                "not patched (%s); the shim only forwards to it and records nothing",
                hp_be.object, hp_be.why_not_patched ? hp_be.why_not_patched : "?");
        return;
    }
    if (hp_be.passed_by[0])
        hp_warn("%s comes after the shim in LD_PRELOAD: the shim's allocations go to %s, so its "
                "checks see none of the program's blocks; preload it before the shim",
                hp_be.passed_by, hp_be.object[0] ? hp_be.object : "the next allocator");
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
    /* A filter the process started under (hp_filtered). */
    if (hp_seccomp_mode() > 0)
        hp_filtered = 1;
    hp_olock_init(); /* after hp_filtered: no membarrier under a filter */
    hp_meta_init(hp_opt.metadata_budget_mb << 20);
    if (hp_opt.profile) {
        hp_stack_init();
        hp_profile_init(hp_spool_hib);
        hp_dump_init();
    }
    hp_access_init();
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

/* The executable's preinit functions (a sanitizer runtime linked into the program starts in
 * one) run before every initialiser but an initfirst one: before this constructor. Their order
 * is kept: this constructor runs them itself, first, after pointing the array's entries at a
 * function that does nothing, so that the loader, which calls the array next, does not run
 * them twice. */
static void preinit_done(int argc, char **argv, char **envp) { (void)argc, (void)argv, (void)envp; }

typedef void (*hp_init_fn)(int, char **, char **);

static void run_preinit(int argc, char **argv, char **envp)
{
    const ElfW(Phdr) *ph = (const ElfW(Phdr) *)getauxval(AT_PHDR);
    size_t phnum = getauxval(AT_PHNUM);
    if (!ph)
        return;
    uintptr_t bias = 0, ro_lo = 0, ro_hi = 0;
    const ElfW(Dyn) *dyn = NULL;
    for (size_t i = 0; i < phnum; i++)
        if (ph[i].p_type == PT_PHDR)
            bias = (uintptr_t)ph - ph[i].p_vaddr;
    for (size_t i = 0; i < phnum; i++) {
        if (ph[i].p_type == PT_DYNAMIC)
            dyn = (const ElfW(Dyn) *)(bias + ph[i].p_vaddr);
        if (ph[i].p_type == PT_GNU_RELRO) { /* the pages the loader made read-only */
            ro_lo = (bias + ph[i].p_vaddr) & ~(uintptr_t)4095;
            ro_hi = (bias + ph[i].p_vaddr + ph[i].p_memsz) & ~(uintptr_t)4095;
        }
    }
    uintptr_t arr = 0, size = 0;
    for (; dyn && dyn->d_tag != DT_NULL; dyn++) {
        if (dyn->d_tag == DT_PREINIT_ARRAY)
            arr = dyn->d_un.d_ptr < bias ? dyn->d_un.d_ptr + bias : dyn->d_un.d_ptr;
        else if (dyn->d_tag == DT_PREINIT_ARRAYSZ)
            size = dyn->d_un.d_val;
    }
    size_t n = size / sizeof(hp_init_fn);
    if (!arr || n == 0 || n > 64)
        return;
    /* The array sits in those read-only pages or in a writable segment; anything else: the
     * loader runs the functions, after this constructor. */
    uintptr_t lo = arr & ~(uintptr_t)4095, hi = (arr + size + 4095) & ~(uintptr_t)4095;
    int ro = lo >= ro_lo && hi <= ro_hi;
    if (!ro) {
        int writable = 0;
        for (size_t i = 0; i < phnum; i++)
            if (ph[i].p_type == PT_LOAD && (ph[i].p_flags & PF_W) && arr >= bias + ph[i].p_vaddr &&
                arr + size <= bias + ph[i].p_vaddr + ph[i].p_memsz && (hi <= ro_lo || lo >= ro_hi))
                writable = 1;
        if (!writable)
            return;
    }
    if (ro && mprotect((void *)lo, hi - lo, PROT_READ | PROT_WRITE) != 0)
        return;
    hp_init_fn *fns = (hp_init_fn *)arr, saved[64];
    for (size_t i = 0; i < n; i++) {
        saved[i] = fns[i];
        fns[i] = preinit_done;
    }
    if (ro)
        mprotect((void *)lo, hi - lo, PROT_READ);
    for (size_t i = 0; i < n; i++)
        if ((uintptr_t)saved[i] + 1 > 1) /* 0 and -1 mark no function */
            saved[i](argc, argv, envp);
}

/* The shim is linked with -z initfirst: the loader runs this before the constructors of every
 * other object, libc's included. So an allocator linked into the program, which the shim can
 * only reach by patching it (do_init), is patched before any library's constructor allocates
 * from it: otherwise those blocks would be missing from the profile and their frees would look
 * foreign. glibc has set up threads, signals and dlsym before any constructor; its own
 * initialiser only records argv and the environment, which glibc passes every initialiser.
 *
 * Nothing here may dlopen while libc's initialiser has not run (environ still NULL): dlopen runs
 * the initialisers of the opened object's dependencies, libc's among them, with libc's record
 * of the arguments, still empty, and the program would start with no environment and no
 * name. The environment is set now (libc sets the same pointer next), so getenv works for the
 * allocators the shim starts early (jemalloc reads MALLOC_CONF) and for option parsing. */
__attribute__((constructor(101))) static void hp_constructor(int argc, char **argv, char **envp)
{
    /* Before libc's initialiser environ is NULL and the loader passes the real environment;
     * a dlopen of the shim passes environ itself (NULL only after clearenv). */
    int libc_initialised = environ != NULL || envp == NULL;
    if (!environ)
        environ = envp;
    if (!libc_initialised)
        run_preinit(argc, argv, envp);
    hp_ready();
    hp_signals_resolve(); /* the interposed signal functions never look glibc's up later */
    if ((hp_passthrough && !hp_headerless) || !hp_profiling)
        return;
    hp_tls.depth++;
    hp_stack_late_init(libc_initialised);
    hp_dump_late_init();
    hp_note_unseen_heaps();
    hp_start_interval_thread();
    at_quick_exit(on_quick_exit);
    hp_leave();
    hp_stack_libc_ready();
}

/* The preloaded library is finalised after the program and the libraries it loaded, so frees
 * made by their destructors and atexit handlers are in the profile. */
__attribute__((destructor(101))) static void hp_destructor(void)
{
    if (hp_init_state == HP_INIT_DONE && hp_profiling)
        hp_dump_at_exit();
}
#endif
