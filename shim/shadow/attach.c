/* The shim's half of attach.h: instrumented modules announce themselves here (through the
 * export heapprof_shadow_attach, shim/interpose/) and get the process's one shadow; the first
 * one reserves it, which turns the shim's shadow work on (hp_shadow_on). The modules and their
 * modes are kept for the profile's ACCESS record. Depends on nothing but shadow.c: the access
 * tests' probe preload (test/access/probe.c) links the two alone. */
#include "shadow/attach.h"
#include "shadow/shadow.h"

struct hp_shadow hp_shadow;

/* Which modes attached so far (hp_attach_mode bits): the report says whether reads and writes
 * are apart (only when no inline module attached) and whether counts may be off (ABI_UNKNOWN). */
unsigned hp_shadow_modes;
int hp_shadow_refuse;
uint32_t hp_shadow_word_max;

static struct hp_shadow_module modules[HP_SHADOW_MODULES_MAX];
static unsigned nmodules;

static int attach_lock;

/* A module seen for the first time goes into the list (under attach_lock). */
static void note_module(const void *where, unsigned mode)
{
    if (!where)
        return;
    for (unsigned i = 0; i < nmodules; i++)
        if (modules[i].addr == (uintptr_t)where) {
            __atomic_fetch_or(&modules[i].mode, mode, __ATOMIC_RELAXED);
            return;
        }
    if (nmodules < HP_SHADOW_MODULES_MAX) {
        modules[nmodules].addr = (uintptr_t)where;
        modules[nmodules].mode = mode;
        __atomic_store_n(&nmodules, nmodules + 1, __ATOMIC_RELEASE);
    }
}

int hp_shadow_attach(struct hp_attach *a)
{
    if (!a || a->version != HP_ATTACH_VERSION || a->size < HP_ATTACH_SIZE_V1 ||
        __atomic_load_n(&hp_shadow_refuse, __ATOMIC_RELAXED))
        return -1;
    /* Callback modules see every access's address: they feed planes 1 and 2, if they can take
     * plane 2's base (a runtime of the first layout cannot). */
    int planes = 0;
    if (a->mode & (HP_MODE_CALLBACKS | HP_MODE_GCC)) {
        planes = HP_SHADOW_WRITES;
        if (a->size >= sizeof *a && __atomic_load_n(&hp_shadow_word_max, __ATOMIC_RELAXED))
            planes |= HP_SHADOW_WORDS;
    }
    /* Modules attach from constructors and dlopen: rarely, maybe from two threads at once. */
    while (__atomic_exchange_n(&attach_lock, 1, __ATOMIC_ACQUIRE))
        __builtin_ia32_pause();
    struct hp_shadow sh = hp_shadow;
    /* A plane 1 that cannot be had leaves wbase 0: writes are then not told apart; without a
     * plane 2, no word histograms. */
    hp_shadow_reserve(&sh, planes);
    /* wbase and hbase first: a thread that sees base may count at once. */
    __atomic_store_n(&hp_shadow.wbase, sh.wbase, __ATOMIC_RELEASE);
    __atomic_store_n(&hp_shadow.hbase, sh.hbase, __ATOMIC_RELEASE);
    __atomic_store_n(&hp_shadow.base, sh.base, __ATOMIC_RELEASE);
    if (sh.base) {
        __atomic_fetch_or(&hp_shadow_modes, a->mode, __ATOMIC_RELAXED);
        note_module(a->module, a->mode);
    }
    __atomic_store_n(&attach_lock, 0, __ATOMIC_RELEASE);
    a->base = sh.base;
    a->wbase = sh.wbase;
    if (a->size >= sizeof *a)
        a->hbase = sh.hbase;
    return sh.base ? 0 : -1;
}

/* Without the lock (a dump may run in a forked child, where the lock may stay taken): an entry
 * is written before the count that shows it. */
unsigned hp_shadow_modules(struct hp_shadow_module *out, unsigned cap)
{
    unsigned n = __atomic_load_n(&nmodules, __ATOMIC_ACQUIRE);
    if (n > cap)
        n = cap;
    for (unsigned i = 0; i < n; i++) {
        out[i].addr = modules[i].addr;
        out[i].mode = __atomic_load_n(&modules[i].mode, __ATOMIC_RELAXED);
    }
    return n;
}
