/* The runtime's setup: find the preloaded shim and take its shadow, or reserve one of our own
 * so instrumented code has somewhere to count; modules announce their mode to the shim. */
#include "instrument.h"
#include "shadow/attach.h"
#include "shadow/shadow.h"

#include <errno.h>
#include <sched.h>
#include <string.h>
#include <unistd.h>

uintptr_t __memprof_shadow_memory_dynamic_address;
uintptr_t __heapprof_rt_wbase;
uintptr_t __heapprof_rt_hbase;

/* The shim's export; NULL when the program runs without it. The objects are built -fPIC, so
 * the reference goes through the GOT and binds at load time in PIE and non-PIE programs alike. */
extern int heapprof_shadow_attach(struct hp_attach *a) __attribute__((weak));

static int state; /* 0: not set up, 1: setting up, 2: done */
static unsigned unknown_abi; /* a MemProf version check this runtime does not know, once */

static void say(const char *a, const char *b, const char *c)
{
    /* One line on stderr; write(2) straight: this may run before stdio is usable. */
    char line[256];
    size_t n = 0;
    const char *parts[] = {"heapprof: ", a, b, c, "\n"};
    for (size_t i = 0; i < sizeof parts / sizeof *parts; i++)
        for (const char *s = parts[i]; s && *s && n < sizeof line; s++)
            line[n++] = *s;
    ssize_t r = write(2, line, n);
    (void)r;
}

static void publish(uintptr_t base, uintptr_t wbase, uintptr_t hbase)
{
    /* wbase and hbase first: code that sees a base may count a write at once. */
    __atomic_store_n(&__heapprof_rt_wbase, wbase, __ATOMIC_RELEASE);
    __atomic_store_n(&__heapprof_rt_hbase, hbase, __ATOMIC_RELEASE);
    __atomic_store_n(&__memprof_shadow_memory_dynamic_address, base, __ATOMIC_RELEASE);
}

/* Ask the shim (for a module, or for the runtime itself: mode 0). 0 when it answered. */
static int attach(unsigned mode, const void *where)
{
    if (!heapprof_shadow_attach)
        return -1;
    struct hp_attach a;
    memset(&a, 0, sizeof a);
    a.version = HP_ATTACH_VERSION;
    a.size = sizeof a;
    a.mode = mode | (__atomic_load_n(&unknown_abi, __ATOMIC_RELAXED) ? HP_MODE_ABI_UNKNOWN : 0);
    a.memprof_abi = mode == HP_MODE_GCC ? 0 : HP_RT_MEMPROF_ABI;
    a.module = where;
    if (heapprof_shadow_attach(&a) != 0 || !a.base)
        return -1;
    /* A callback module may have had planes 1 and 2 made after an inline one attached: keep
     * the newest answer. */
    publish(a.base, a.wbase ? a.wbase : __atomic_load_n(&__heapprof_rt_wbase, __ATOMIC_ACQUIRE),
            a.hbase ? a.hbase : __atomic_load_n(&__heapprof_rt_hbase, __ATOMIC_ACQUIRE));
    return 0;
}

/* No shim (or it refused): a shadow of our own, plane 0 only, since nothing reads it; at the
 * fixed place, so copies of this runtime in other modules share it. */
static void reserve_own(void)
{
    struct hp_shadow sh = {0, 0, 0};
    int r = hp_shadow_reserve(&sh, 0);
    if (r) {
        say("cannot reserve the 16 TiB (address space, not memory) access shadow: ", strerror(-r),
            "; inline-instrumented code will fault (ulimit -v? vm.overcommit_memory=2?)");
        return;
    }
    publish(sh.base, 0, 0);
}

void hp_rt_init(void)
{
    int s = 0;
    if (__atomic_load_n(&state, __ATOMIC_ACQUIRE) == 2)
        return;
    if (!__atomic_compare_exchange_n(&state, &s, 1, 0, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE)) {
        /* Another thread sets up (two libraries opened at once): wait for it. */
        while (__atomic_load_n(&state, __ATOMIC_ACQUIRE) != 2)
            sched_yield();
        return;
    }
    int saved = errno;
    if (attach(HP_MODE_NONE, NULL) != 0)
        reserve_own();
    errno = saved;
    __atomic_store_n(&state, 2, __ATOMIC_RELEASE);
}

void __heapprof_rt_module(unsigned mode, const void *where)
{
    hp_rt_init();
    int saved = errno;
    attach(mode, where);
    errno = saved;
}

void hp_rt_unknown_abi(unsigned version)
{
    unsigned none = 0;
    if (!__atomic_compare_exchange_n(&unknown_abi, &none, version, 0, __ATOMIC_RELAXED,
                                     __ATOMIC_RELAXED))
        return;
    char v[12];
    size_t n = sizeof v - 1;
    v[n] = 0;
    do
        v[--n] = (char)('0' + version % 10);
    while ((version /= 10) && n);
    say("a module was compiled for MemProf runtime ABI v", v + n,
        ", this runtime speaks v1: its access counts are kept apart as unreliable "
        "(rebuild it with heapprof-cc)");
    hp_rt_init();
    attach(HP_MODE_NONE, NULL); /* tell the shim */
}

/* The runtime's own constructor, first among a module's (priority 1, as clang's module
 * constructor): for modules linked without a module object, and libraries whose executable
 * has no preinit entry. */
static void rt_ctor(void) { hp_rt_init(); }
__attribute__((section(".init_array.00001"), used)) static void (*rt_ctor_entry)(void) = rt_ctor;
