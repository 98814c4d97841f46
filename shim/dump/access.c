/* The access-profiling part of a dump (docs/FORMAT.md, ACCESS and ACCESS_HIST): which modules
 * count into the shadow, the access figures of blocks still live (read from the shadow through
 * the live-block registry and folded into their contexts' HIBs), each context's histogram, and
 * what the shadow costs in memory. Nothing of it is written while no module attached. */
#include "dump/dump_internal.h"
#include "shadow/shadow.h"

#include <errno.h>
#include <sys/syscall.h>
#include <unistd.h>

/* The fold of this dump: a context's live figures are this dump's when their live_seq is it
 * (under the dump lock). */
static uint32_t fold_seq;

void hp_write_access(struct writer *w)
{
    if (!hp_shadow_on())
        return;
    static struct hp_shadow_module mods[HP_SHADOW_MODULES_MAX];
    unsigned n = hp_shadow_modules(mods, HP_SHADOW_MODULES_MAX);
    struct hpf_access a = {__atomic_load_n(&hp_shadow_modes, __ATOMIC_RELAXED), HP_SHADOW_GRANULE,
                           hp_hist_bins, n};
    struct hpf_access_words words = {0, 0, HP_WORD_MAX, 0};
    if (__atomic_load_n(&hp_shadow.hbase, __ATOMIC_ACQUIRE) && hp_word_bins) {
        words.word = HP_WORD_BYTES;
        words.max_size = hp_shadow_word_max;
    }
    hp_w_record(w, HPF_REC_ACCESS, 0,
                sizeof a + (uint64_t)n * sizeof(struct hpf_access_module) + sizeof words);
    hp_w_bytes(w, &a, sizeof a);
    for (unsigned i = 0; i < n; i++) {
        struct hpf_access_module m = {mods[i].addr, mods[i].mode, 0};
        hp_w_bytes(w, &m, sizeof m);
    }
    hp_w_bytes(w, &words, sizeof words);
}

/* One live block: its figures from the shadow, counters left as they are, into its context's
 * live HIB and live histogram (reset the first time this dump sees the context). */
static void fold_block(uintptr_t user, uint64_t size, uint32_t ctx, void *arg)
{
    (void)arg;
    struct hp_ctx_access *a = hp_ctx_access(ctx, 1);
    if (!a)
        return;
    uint32_t bins = hp_hist_bins;
    struct hp_word_hist wh = hp_hist_words(a->hist);
    if (a->live_seq != fold_seq) {
        hp_memset(&a->live, 0, sizeof a->live);
        hp_memset(a->hist + bins, 0, bins * sizeof a->hist[0]);
        if (wh.live) {
            hp_memset(wh.live, 0, a->word_bins * sizeof a->hist[0]);
            hp_memset(wh.live_sat, 0, a->word_bins * sizeof a->hist[0]);
        }
        a->live_seq = fold_seq;
    }
    struct hp_shadow_sum s;
    uint64_t g = hp_shadow_granules(user, size);
    hp_shadow_peek(&hp_shadow, user, size, &s, g <= bins ? a->hist + bins : NULL, bins);
    if (wh.live && size && size <= hp_shadow_word_max)
        hp_shadow_word_peek(&hp_shadow, user, size, wh.live, wh.live_sat, a->word_bins);
    struct hp_block_event e;
    hp_memset(&e, 0, sizeof e);
    e.size = size;
    e.access_count = s.accesses;
    e.write_count = s.writes;
    e.percent_utilized = hp_shadow_util_pct(&s);
    hp_hib_add(&a->live, &e);
}

void hp_access_fold_live(void)
{
    if (!hp_shadow_on())
        return;
    if (++fold_seq == 0)
        fold_seq = 1;
    hp_shadow_live_foreach(fold_block, NULL);
}

/* The live blocks' access figures of context c into h, the HIB of its lc live blocks: those
 * the registry did not have (made before the shadow was on) count as blocks without
 * accesses. */
void hp_access_fold_into(const struct hp_ctx *c, struct hpf_hib *h, int64_t lc)
{
    const struct hp_ctx_access *a = __atomic_load_n(&c->access, __ATOMIC_ACQUIRE);
    if (!a || a->live_seq != fold_seq || !a->live.alloc_count || !hp_shadow_on())
        return;
    const struct hpf_hib *l = &a->live;
    h->total_access_count = l->total_access_count;
    h->min_access_count = l->min_access_count;
    h->max_access_count = l->max_access_count;
    h->total_write_count = l->total_write_count;
    h->min_write_count = l->min_write_count;
    h->max_write_count = l->max_write_count;
    h->total_percent_utilized = l->total_percent_utilized;
    h->min_percent_utilized = l->min_percent_utilized;
    h->max_percent_utilized = l->max_percent_utilized;
    if (l->alloc_count < (uint64_t)lc)
        h->min_access_count = h->min_write_count = h->min_percent_utilized = 0;
}

/* One ACCESS_HIST record of context id: freed[i] + live[i] (live NULL: freed alone), up to the
 * last bin that is not 0 (none when all are). */
static void write_hist(struct writer *w, uint32_t id, uint32_t kind, const uint64_t *freed,
                       const uint64_t *live, uint32_t nb)
{
    static uint64_t bins[1024];
    uint32_t used = 0;
    for (uint32_t i = 0; i < nb && i < sizeof bins / sizeof bins[0]; i++) {
        bins[i] = __atomic_load_n(&freed[i], __ATOMIC_RELAXED) + (live ? live[i] : 0);
        if (bins[i])
            used = i + 1;
    }
    if (!used)
        return;
    struct hpf_access_hist hh = {id, kind, used, 0};
    hp_w_record(w, HPF_REC_ACCESS_HIST, 0, sizeof hh + (uint64_t)used * sizeof bins[0]);
    hp_w_bytes(w, &hh, sizeof hh);
    hp_w_bytes(w, bins, used * sizeof bins[0]);
}

/* Each context's histograms: its freed blocks' bins plus its live blocks' of this dump; per
 * granule, then per word and the words' saturation counts when callback builds counted them. */
void hp_write_access_hists(struct writer *w)
{
    uint32_t nb = hp_hist_bins, nw = hp_word_bins;
    if (!hp_shadow_on())
        return;
    int words = nw && __atomic_load_n(&hp_shadow.hbase, __ATOMIC_ACQUIRE);
    uint32_t n = __atomic_load_n(&hp_prof.next_id, __ATOMIC_ACQUIRE);
    for (uint32_t id = 1; id < n && id < hp_prof.max_id; id++) {
        struct hp_ctx *c = __atomic_load_n(&hp_prof.by_id[id], __ATOMIC_ACQUIRE);
        struct hp_ctx_access *a = c ? __atomic_load_n(&c->access, __ATOMIC_ACQUIRE) : NULL;
        if (!a || !hp_in_dump(c))
            continue;
        /* Live bins only with the live HIB (records.c: a context with live blocks). Blocks made
         * after the thread caches were flushed can be in the registry while their context's
         * count is 0: their accesses are then in neither, rather than in the histogram alone. */
        int live = a->live_seq == fold_seq && __atomic_load_n(&c->live_count, __ATOMIC_RELAXED) > 0;
        if (nb)
            write_hist(w, id, HPF_HIST_GRANULE, a->hist, live ? a->hist + nb : NULL, nb);
        if (!words)
            continue;
        struct hp_word_hist wh = hp_hist_words(a->hist);
        if (!wh.freed)
            continue;
        write_hist(w, id, HPF_HIST_WORD, wh.freed, live ? wh.live : NULL, nw);
        write_hist(w, id, HPF_HIST_WORD_SATURATED, wh.freed_sat, live ? wh.live_sat : NULL, nw);
    }
}

/* ---------- what the shadow costs in memory ---------- */

static uint64_t parse_hex(const char *p, const char *end, const char **stop)
{
    uint64_t v = 0;
    for (; p < end; p++) {
        char ch = *p;
        unsigned d = ch >= '0' && ch <= '9' ? (unsigned)(ch - '0')
                     : ch >= 'a' && ch <= 'f' ? (unsigned)(ch - 'a' + 10) : 16;
        if (d == 16)
            break;
        v = v * 16 + d;
    }
    *stop = p;
    return v;
}

/* One line of /proc/self/smaps: a mapping's first line (its range) says whether the lines
 * after it are a shadow plane's; its "Rss:" line then adds to *rss. */
static void smaps_line(const char *p, const char *end, int *in_plane, uint64_t *rss)
{
    const char *q;
    uint64_t start = parse_hex(p, end, &q);
    if (q > p && q < end && *q == '-') {
        *in_plane = start && (start == hp_shadow.base || start == hp_shadow.wbase);
        return;
    }
    if (*in_plane && end - p > 4 && !hp_memcmp(p, "Rss:", 4)) {
        uint64_t kb = 0;
        for (p += 4; p < end && (*p == ' ' || *p == '\t'); p++)
            ;
        for (; p < end && *p >= '0' && *p <= '9'; p++)
            kb = kb * 10 + (uint64_t)(*p - '0');
        *rss += kb << 10;
    }
}

/* Bytes of the shadow's planes in memory, from /proc/self/smaps (their mappings' Rss, which
 * leaves out pages only read, mapped to the zero page). 0 under a seccomp filter: the shim
 * reads nothing of /proc there. */
uint64_t hp_access_shadow_resident(void)
{
    if (!hp_shadow_on() || __atomic_load_n(&hp_filtered, __ATOMIC_RELAXED))
        return 0;
    long fd = hp_open_proc_self("smaps");
    if (fd < 0)
        return 0;
    static char buf[8192];
    size_t have = 0;
    int in_plane = 0;
    uint64_t rss = 0;
    for (;;) {
        long r = syscall(SYS_read, (int)fd, buf + have, sizeof buf - have);
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0)
            break;
        have += (size_t)r;
        size_t start = 0;
        for (size_t i = 0; i < have; i++)
            if (buf[i] == '\n') {
                smaps_line(buf + start, buf + i, &in_plane, &rss);
                start = i + 1;
            }
        /* A line longer than the buffer (a long path) is cut: its start was looked at. */
        if (start == 0 && have == sizeof buf)
            start = have;
        have -= start;
        for (size_t i = 0; i < have; i++)
            buf[i] = buf[start + i];
    }
    syscall(SYS_close, (int)fd);
    return rss;
}

#ifdef HP_UNIT_TEST
/* For test_access: the access records of a dump, to fd (the live blocks folded first). */
void hp_test_write_access(int fd);
void hp_test_write_access(int fd)
{
    struct writer *w = &hp_ds.wr;
    w->fd = fd;
    hp_w_reset(w);
    hp_write_access(w);
    hp_access_fold_live();
    hp_write_access_hists(w);
    hp_w_flush(w);
}
#endif
