/* Access profiling on the allocation paths (docs/DESIGN.md, "shim/shadow/"): attaching modules,
 * the executable's shadow variable set at init, and what a block's allocation and its going
 * away do to the shadow and the registry of live blocks. The paths call these only while the
 * shadow is on (hp_shadow_on). */
#include "core/core.h"
#include "core/core_internal.h"
#include "core/header_internal.h"
#include "backend/backend.h"
#include "profile/profile.h"
#include "shadow/attach.h"
#include "shadow/shadow.h"

int hp_access_attach(struct hp_attach *a)
{
    /* Init first: whether access=0 refuses is known only after it (a module's constructor
     * may come before the program's first allocation). */
    hp_ready();
    int r = hp_shadow_attach(a);
    if (__atomic_load_n(&hp_shadow.hbase, __ATOMIC_ACQUIRE))
        __atomic_store_n(&hp_word_hists_on, 1, __ATOMIC_RELEASE);
    return r;
}

/* After the profiler's init. The instrumented executable (heapprof-cc exports its copy of the
 * variable) gets its shadow base now, before any constructor runs code of a module. */
void hp_access_init(void)
{
    if (!hp_opt.access || !hp_profiling) {
        __atomic_store_n(&hp_shadow_refuse, 1, __ATOMIC_RELAXED);
        return;
    }
    __atomic_store_n(&hp_profile_thread_exit_hook, hp_shadow_live_thread_exit, __ATOMIC_RELEASE);
    /* Before any attach: it decides whether callback modules get a word plane. */
    __atomic_store_n(&hp_shadow_word_max, (uint32_t)hp_opt.access_word_hist_max, __ATOMIC_RELAXED);
    uintptr_t *var = hp_global_sym("__memprof_shadow_memory_dynamic_address");
    if (!var)
        return;
    struct hp_attach a = {HP_ATTACH_VERSION, sizeof a, HP_MODE_NONE, 0, NULL, 0, 0, 0};
    if (hp_shadow_attach(&a) == 0 && !__atomic_load_n(var, __ATOMIC_RELAXED))
        __atomic_store_n(var, a.base, __ATOMIC_RELEASE);
}

/* A block whose words plane 2 counts: callback builds attached (hbase) and the block is small. */
static inline int word_block(uint64_t size)
{
    return hp_shadow.hbase && size && size <= hp_shadow_word_max;
}

/* Out of line (noinline also under LTO): the allocation and free paths of programs without
 * instrumented modules keep their code and frames as without access profiling (inlined, these
 * made python3's hp_alloc and hp_free 7 and 4 instructions longer, cachegrind). */
__attribute__((noinline)) uint32_t hp_access_alloc(uintptr_t user, uint64_t size, uint32_t ctx)
{
    /* A reused address may hold counts of a freed block's late accesses, or of memory that was
     * no block. */
    hp_shadow_clear(&hp_shadow, user, size);
    if (!ctx || !hp_profiling)
        return 0;
    /* Only blocks whose free reads their words are armed: the others' stay 0, uncounted. */
    if (word_block(size))
        hp_shadow_word_arm(&hp_shadow, user, size);
    return hp_shadow_live_add(user, size, ctx);
}

__attribute__((noinline)) void hp_access_take(uintptr_t user, const struct hp_header *h,
                                              struct hp_access *acc)
{
    struct hp_shadow_sum s;
    uint64_t size = hp_hdr_size(h), g = hp_shadow_granules(user, size), *hist = NULL;
    int gran = g && g <= hp_hist_bins, words = word_block(size), own = 0;
    acc->nbins = 0;
    if (h->context_id && hp_profiling) {
        /* A small block's bins go along with its figures (struct hp_access). */
        own = gran && g <= HP_ACC_BINS;
        if ((gran && !own) || words)
            hist = hp_profile_hists(h->context_id);
        hp_shadow_live_del(h->live_ref, user);
        if (words) {
            struct hp_word_hist w = hist ? hp_hist_words(hist) : (struct hp_word_hist){0, 0, 0, 0};
            hp_shadow_word_take(&hp_shadow, user, size, w.freed, w.freed_sat,
                                w.freed ? hp_word_bins : 0);
        }
    }
    if (own) {
        hp_shadow_take_own(&hp_shadow, user, size, &s, acc->bins, g);
        acc->nbins = (uint32_t)g;
    } else {
        hp_shadow_take(&hp_shadow, user, size, &s, gran ? hist : NULL, hp_hist_bins);
    }
    acc->accesses = s.accesses;
    acc->writes = s.writes;
    acc->percent_utilized = hp_shadow_util_pct(&s);
}

__attribute__((noinline)) void hp_access_free(uintptr_t user, const struct hp_header *h)
{
    struct hp_access acc;
    hp_access_take(user, h, &acc);
    if (h->context_id && hp_profiling)
        hp_profile_free_access(h->context_id, hp_hdr_size(h), h->alloc_ms, hp_hdr_cpu(h), &acc);
}
