/* Setting the profiler up: the tables sized to fit the metadata budget and the address-space
 * limit, then mapped. */
#include "profile/profile_internal.h"

#include <errno.h>
#include <sys/resource.h>

struct hp_prof hp_prof;
int hp_profiling;
int hp_profile_headerless;

/* Address space the profiler's tables take for these sizes. */
static uint64_t table_bytes(uint64_t max_contexts, uint64_t hib_size, uint64_t nways)
{
    return hp_pages(hp_depot_buckets(max_contexts) * sizeof(struct hp_ctx *)) +
           hp_pages((max_contexts + 1) * sizeof(struct hp_ctx *)) + hp_table_bytes(hib_size, nways);
}

/* The tables are made at full size at once (their pages are touched only as contexts come):
 * with max_contexts and hib_table_size at their defaults that is 19 MiB of address space. A
 * small metadata budget, or an address-space limit (ulimit -v; the bare program may need all
 * of it), gets tables for fewer contexts, at most half the budget and a sixteenth of the
 * limit, and one line saying so. */
static void fit_tables(void)
{
    uint64_t limit = hp_meta_budget() / 2, mc = hp_opt.max_contexts, hs = hp_opt.hib_table_size;
    uint64_t nways = hp_opt.hib_table_ways, as = hp_soft_limit(RLIMIT_AS);
    int by_as = as / 16 < limit;
    if (by_as)
        limit = as / 16;
    while (table_bytes(mc, hs, nways) > limit && (mc > 4096 || hs > 1024)) {
        if (mc > 4096)
            mc /= 2;
        if (hs > 1024 && hs / 2 >= nways)
            hs /= 2;
        else if (mc <= 4096)
            break;
    }
    if (mc == hp_opt.max_contexts && hs == hp_opt.hib_table_size)
        return;
    /* A budget that small is the user's choice, and said; a limit is the environment's, and
     * said with verbosity=2 only (the profile counts allocations of contexts past the limit). */
    void (*say)(const char *, ...) __attribute__((format(printf, 1, 2))) = by_as ? hp_info : hp_warn;
    say("tables for %llu contexts and %llu HIB table entries (max_contexts=%llu, "
        "hib_table_size=%llu) to fit %s of %llu MiB",
        (unsigned long long)mc, (unsigned long long)hs, (unsigned long long)hp_opt.max_contexts,
        (unsigned long long)hp_opt.hib_table_size,
        by_as ? "the address-space limit (ulimit -v)" : "metadata_budget_mb",
        (unsigned long long)((by_as ? as : hp_meta_budget()) >> 20));
    hp_opt.max_contexts = mc;
    hp_opt.hib_table_size = hs;
}

void hp_profile_init(void (*evict)(const struct hpf_hib *))
{
    fit_tables();
    hp_prof.max_id = (uint32_t)hp_opt.max_contexts + 1;
    hp_prof.next_id = 1;
    int depot = hp_depot_map();
    int table = hp_table_map(evict);
    hp_prof.slack = hp_opt.peak_slack_kb * 1024;
    hp_prof.peak_dump_at = hp_opt.dump_peak_growth ? (uint64_t)1 << 20 : 0;
    if (!depot || !table) {
        uint64_t bytes = table_bytes(hp_opt.max_contexts, hp_opt.hib_table_size, hp_opt.hib_table_ways);
        uint64_t mib = (bytes + (1u << 20) - 1) >> 20;
        uint64_t as = hp_soft_limit(RLIMIT_AS);
        int e = __atomic_load_n(&hp_meta_map_errno, __ATOMIC_RELAXED);
        if (!e)
            hp_error("metadata budget too small for the profiler's tables (%llu MiB); profiling is off",
                     (unsigned long long)mib);
        else if (e == ENOMEM && as != UINT64_MAX)
            hp_error("cannot map the profiler's tables (%llu MiB) under the address-space limit of "
                     "%llu MiB (ulimit -v); profiling is off", (unsigned long long)mib,
                     (unsigned long long)(as >> 20));
        else
            hp_error("cannot map the profiler's tables (%llu MiB, errno %d); profiling is off",
                     (unsigned long long)mib, e);
        hp_profiling = 0;
        return;
    }
    hp_threads_init();
    hp_hist_bins = (uint32_t)hp_opt.access_hist_granules;
    hp_word_bins = (uint32_t)((hp_opt.access_word_hist_max + 7) / 8);
    hp_profiling = 1;
}
