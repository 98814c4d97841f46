/* STUB for phase 2 of issue 41, not built into the shim yet: the lead wires it in after the
 * layout move (add heapprof_shadow_attach to interpose/libheapprof.map, this file to the shim's
 * sources, and the calls listed below). It is the shim's half of attach.h: instrumented modules
 * announce themselves here and get the process's one shadow.
 *
 * Phase 2 calls, all behind hp_shadow_on() (one load and branch while nothing attached):
 *   allocation (core: after the header is written)  hp_shadow_clear(&hp_shadow, user, size)
 *   free, before the backend gets the block back    hp_shadow_take(&hp_shadow, user, size, &sum,
 *                                                    hist, hist_len) -> HIB access fields
 *   realloc: take on the old block before the backend's realloc (the old range may be reused
 *   at once), clear on the new one; hp_forget_block: take.
 *   dump of live blocks: hp_shadow_peek per live block (needs a way to visit them).
 * Until it is wired, the test preload test/access/probe.c links this file with shadow.c. */
#include "shadow/attach.h"
#include "shadow/shadow.h"

struct hp_shadow hp_shadow;

/* Which modes attached so far (hp_attach_mode bits): the report says whether reads and writes
 * are apart (only when no inline module attached) and whether counts may be off (ABI_UNKNOWN). */
unsigned hp_shadow_modes;

static int attach_lock;

int heapprof_shadow_attach(struct hp_attach *a) __attribute__((visibility("default")));

int heapprof_shadow_attach(struct hp_attach *a)
{
    if (!a || a->version != HP_ATTACH_VERSION || a->size < sizeof *a)
        return -1;
    int writes = (a->mode & (HP_MODE_CALLBACKS | HP_MODE_GCC)) != 0;
    /* Modules attach from constructors and dlopen: rarely, maybe from two threads at once. */
    while (__atomic_exchange_n(&attach_lock, 1, __ATOMIC_ACQUIRE))
        __builtin_ia32_pause();
    struct hp_shadow sh = hp_shadow;
    /* A plane 1 that cannot be had leaves wbase 0: writes are then not told apart. */
    hp_shadow_reserve(&sh, writes);
    /* wbase first: a thread that sees base may count writes at once. */
    __atomic_store_n(&hp_shadow.wbase, sh.wbase, __ATOMIC_RELEASE);
    __atomic_store_n(&hp_shadow.base, sh.base, __ATOMIC_RELEASE);
    __atomic_fetch_or(&hp_shadow_modes, a->mode, __ATOMIC_RELAXED);
    /* PHASE 2: record a->module and a->mode for the profile's module list; refuse (-1) when
     * access profiling is switched off by an option. */
    __atomic_store_n(&attach_lock, 0, __ATOMIC_RELEASE);
    a->base = sh.base;
    a->wbase = sh.wbase;
    return sh.base ? 0 : -1;
}
