/* The process's peak live heap and every context's values at it (hp_prof.peak_*, the contexts'
 * peak_live_*; how they are copied: hp_copy_at_peak in profile_internal.h), and the slack by
 * which threads batch their live-heap changes. */
#include "profile/profile_internal.h"

hp_lock_t hp_peak_lock = HP_LOCK_INIT;

/* Every context not copied since the current generation began: its counters have not changed
 * since, so they are its values at the peak. With several threads: all of them. */
void hp_copy_stale_contexts(int all)
{
    uint32_t n = __atomic_load_n(&hp_prof.next_id, __ATOMIC_ACQUIRE);
    for (uint32_t id = 1; id < n && id < hp_prof.max_id; id++) {
        struct hp_ctx *c = __atomic_load_n(&hp_prof.by_id[id], __ATOMIC_ACQUIRE);
        if (c && (all || c->peak_gen != hp_prof.peak_gen))
            hp_copy_at_peak(c, __atomic_load_n(&c->live_count, __ATOMIC_RELAXED),
                            __atomic_load_n(&c->live_size, __ATOMIC_RELAXED));
    }
}

/* Take the values at the peak now (see above); with hp_peak_lock held. */
static void peak_request(void)
{
    hp_prof.peak_gen++;
    if (hp_prof_multi)
        hp_copy_stale_contexts(1);
    hp_prof.peak_snap_size = hp_prof.peak_size;
    __atomic_store_n(&hp_prof.peak_pending, 0, __ATOMIC_RELEASE);
}

HP_COLD void hp_peak_request_if_pending(void)
{
    hp_lock(&hp_peak_lock);
    if (hp_prof.peak_pending)
        peak_request();
    hp_unlock(&hp_peak_lock);
}

void hp_peak_finish(void)
{
    hp_lock(&hp_peak_lock);
    if (hp_prof.peak_pending && (uint64_t)__atomic_load_n(&hp_prof.live_size, __ATOMIC_RELAXED) >= hp_prof.peak_size)
        peak_request();
    if (!hp_prof_multi)
        hp_copy_stale_contexts(0);
    hp_unlock(&hp_peak_lock);
}

/* The process's live heap reached a new high: now_size. */
__attribute__((noinline)) void hp_new_peak(int64_t now_size, int64_t now_count, uint32_t now_ms)
{
    if (hp_prof_multi)
        hp_lock(&hp_peak_lock);
    if ((uint64_t)now_size > hp_prof.peak_size) {
        hp_prof.peak_size = (uint64_t)now_size;
        /* Threads batch their live-byte changes by the slack: peak_slack_kb, or 1/256 of the
         * peak once that is more (rounded to a power of two, so it changes rarely). The error
         * bound stays proportionate for small heaps, and large ones push less often. */
        uint64_t want = hp_prof.peak_size >> 8;
        if (want > __atomic_load_n(&hp_prof.slack, __ATOMIC_RELAXED))
            __atomic_store_n(&hp_prof.slack, hp_round_pow2(want), __ATOMIC_RELAXED);
        hp_prof.peak_count = now_count > 0 ? (uint64_t)now_count : 0;
        hp_prof.peak_ms = now_ms;
        /* Per-context values at the peak are wanted when the heap starts to shrink from it.
         * With one thread that costs nothing at the time (copied lazily), so every new peak
         * counts; with several it is a pass over the contexts, taken only when the peak grew
         * by more than 1% since the last one, which bounds the number of passes. */
        if (!hp_prof_multi || hp_prof.peak_size > hp_prof.peak_snap_size + hp_prof.peak_snap_size / 100 ||
            hp_prof.peak_snap_size == 0)
            hp_prof.peak_pending = 1;
        /* dump_peak_growth: written by this thread on its way out of the shim. */
        if (HP_UNLIKELY(hp_prof.peak_dump_at) && hp_prof.peak_size >= hp_prof.peak_dump_at) {
            hp_prof.peak_dump_at = hp_prof.peak_size + hp_prof.peak_size / 100 * hp_opt.dump_peak_growth;
            if (!hp_dump_pending)
                hp_dump_pending = HPF_DUMP_PEAK;
        }
    }
    if (hp_prof_multi)
        hp_unlock(&hp_peak_lock);
}
