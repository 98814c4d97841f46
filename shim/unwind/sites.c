/* The site cache: a thread's whole stacks by their innermost frame, kept with the stack slots
 * their walk read, so that an allocation from a stack the thread allocated from before finds
 * its context without a walk (struct hp_site_cache). */
#include "unwind/unwind_internal.h"

#if defined(__x86_64__)

/* Lookups per judgement of the hit rate; lookups skipped after a window with under a quarter
 * of hits once the sets are at their largest (a program whose stacks keep changing would pay
 * for lookups and additions that never pay back): HP_SITE_SKIP after the first such window,
 * twice as many after each further one in a row, up to 32 times. And no entries are made for
 * a window after one (at the largest size) that made more entries than it had hits, for two
 * after the next such, and so on up to 32: a thread with more stacks than the sets hold keeps
 * replacing entries that would not have been used again (bench/alloc_bench keyed by the frame
 * alone at 256 sets: 28% hits for 70% additions, each costing about as much as the walks of
 * two allocations), while its lookups go on finding the entries there are. Either, three
 * times in a row while the sets are keyed by the frame alone, keys them deep (site_go_deep). */
#define HP_SITE_WINDOW 1024
#define HP_SITE_DEEP_AFTER 3
#define HP_SITE_SKIP 32768
#define ORDER_INIT 0xe4 /* ways 0, 1, 2, 3 from most to least recently used */

static inline uint64_t site_set(uintptr_t ip, uintptr_t sp, uint64_t mask)
{
    return (((ip ^ (sp * 0x9e3779b97f4a7c15ull)) * 0x9e3779b97f4a7c15ull) >> 40) & mask;
}

/* Way w becomes the most recently used of order o. */
static inline uint8_t order_touch(uint8_t o, unsigned w)
{
    unsigned p = 0;
    while (((o >> (2 * p)) & 3) != w)
        p++;
    unsigned below = o & ((1u << (2 * p)) - 1);
    unsigned above = p == 3 ? 0 : o & ~((1u << (2 * p + 2)) - 1) & 0xff;
    return (uint8_t)(above | (below << 2) | w);
}

void hp_sites_clear(struct hp_site_cache *sc)
{
    if (!sc->tags)
        return;
    hp_memset(sc->tags, 0, (sc->mask + 1) * sizeof *sc->tags);
    hp_memset(sc->order, ORDER_INIT, sc->mask + 1);
}

void hp_walk_cache_forget(struct hp_walk_cache *wc)
{
    hp_walk_cache_reset(wc);
    hp_sites_clear(&wc->sites);
    wc->sites.pending = 0;
}

/* Make the cache n sets, empty; 0 without metadata memory (then the old sets stay). */
static HP_COLD int sites_alloc(struct hp_site_cache *sc, uint64_t n)
{
    struct hp_site_tag(*tags)[HP_SITE_WAYS] = hp_meta_alloc(n * sizeof *tags);
    struct hp_site *body = tags ? hp_meta_alloc(n * HP_SITE_WAYS * sizeof *body) : NULL;
    uint8_t *order = body ? hp_meta_alloc(n) : NULL;
    if (!order)
        return 0; /* what was allocated stays in the arena, unused */
    hp_memset(order, ORDER_INIT, n);
    sc->order = order;
    sc->body = body;
    sc->mask = n - 1;
    __atomic_signal_fence(__ATOMIC_SEQ_CST);
    sc->tags = tags;
    sc->misses = 0;
    return 1;
}

/* An entry's checks after the first, and the caller's rbp, are kept only as a chain value.
 * Checks 1, 2, 3, ... go round four lanes, each its own chain h = (h ^ value) * K from 0 (a
 * single chain would make a hit's checks one long dependency, a multiply after every load:
 * four run side by side); the lanes are then folded, each rotated by its own amount, and the
 * caller's rbp (0 when it does not matter) is the last step. Every step and every rotation is
 * a bijection, so a check with one value changed always ends elsewhere; with several changed,
 * their differences would have to cancel out exactly (two lanes changed alike cancel only when
 * that difference repeats every 16 bits or less, the rotations differing by 14 to 47 bits:
 * about one chance in 2^48 for the difference of two products by K). */
#define SITE_K 0x9fb21c651e98df25ull
#define SITE_LANES 4

static inline uint64_t site_step(uint64_t h, uint64_t v) { return (h ^ v) * SITE_K; }

static inline uint64_t site_rotl(uint64_t v, unsigned r) { return (v << r) | (v >> (64 - r)); }

static inline uint64_t site_fold(uint64_t h0, uint64_t h1, uint64_t h2, uint64_t h3, uint64_t bp)
{
    return site_step(h0 ^ site_rotl(h1, 17) ^ site_rotl(h2, 31) ^ site_rotl(h3, 47), bp);
}

/* Do the entry's slots still hold what its walk read, seen from stack pointer sp (on the same
 * stack: the caller compared the room above sp)? Check 0 exactly, first: another stack with the
 * same innermost frame nearly always parts there. Then the others, one to each of the four
 * chains in turn (hp_cfi_site_add pads them to a multiple of four with copies of check 0). */
static inline int site_holds(const struct hp_site *b, uintptr_t sp, uintptr_t bp)
{
    const uintptr_t *s = (const uintptr_t *)sp;
    uint64_t h0 = 0, h1 = 0, h2 = 0, h3 = 0;
    if (HP_LIKELY(b->n)) { /* (none: a walk of one frame, cut there or unable to step) */
        if (s[b->off[0]] != b->val0)
            return 0;
        for (const uint16_t *o = b->off + 1, *end = b->off + b->n; o < end; o += SITE_LANES) {
            h0 = site_step(h0, s[o[0]]);
            h1 = site_step(h1, s[o[1]]);
            h2 = site_step(h2, s[o[2]]);
            h3 = site_step(h3, s[o[3]]);
        }
    }
    return site_fold(h0, h1, h2, h3, bp & (0 - (uint64_t)b->bp_matters)) == b->sum;
}

/* The most sets a thread's site cache may have. */
static inline uint64_t sites_max(const struct hp_site_cache *sc)
{
    return sc->deep ? sc->deep : HP_SITE_SETS_MAX;
}

/* Keyed by the frame alone and at full size, HP_SITE_DEEP_AFTER windows in a row with under a
 * quarter of hits or with more entries made than hits (the cache resting or making no entries
 * in between, as below): more stacks under one frame and stack pointer than four ways hold
 * (python3 and node have one or two such windows in a run, apart; bench/alloc_bench's random
 * call chains one after another). The sets are keyed deep from then on, and start empty (the
 * entries there sit in sets chosen the other way). */
static int site_go_deep(struct hp_site_cache *sc)
{
    if (sc->deep || sc->mask != HP_SITE_SETS_MAX - 1)
        return 0;
    if (sc->hits >= HP_SITE_WINDOW / 4 && sc->hits >= sc->adds) {
        sc->bad_runs = 0;
        return 0;
    }
    if (++sc->bad_runs < HP_SITE_DEEP_AFTER)
        return 0;
    /* Growing past the sets keyed by the frame alone costs 640 KiB more: not once half of
     * the metadata budget is spent (many threads keyed deep would take what contexts need). */
    sc->deep = hp_meta_used() < hp_meta_budget() / 2 ? HP_SITE_SETS_DEEP_MAX : HP_SITE_SETS_MAX;
    hp_sites_clear(sc);
    sc->misses = 0;
    sc->no_adds = sc->add_runs = sc->low_runs = 0;
    return 1;
}

/* Judge the window that just ended (the hit rate of the last HP_SITE_WINDOW lookups). */
static HP_COLD void site_window(struct hp_site_cache *sc)
{
    if (site_go_deep(sc)) {
        sc->tries = sc->hits = sc->adds = 0;
        return;
    }
    if (sc->hits < HP_SITE_WINDOW / 4 && sc->mask == sites_max(sc) - 1) {
        sc->off = HP_SITE_SKIP << sc->low_runs;
        if (sc->low_runs < 5)
            sc->low_runs++;
    } else {
        sc->low_runs = 0;
    }
    if (sc->no_adds) {
        sc->no_adds--;
    } else if (sc->mask == sites_max(sc) - 1 && sc->hits < sc->adds) {
        sc->no_adds = 1u << sc->add_runs;
        if (sc->add_runs < 5)
            sc->add_runs++;
    } else {
        sc->add_runs = 0;
    }
    sc->tries = sc->hits = sc->adds = 0;
}

/* The key that chooses a deep cache's set: the frame's address mixed with the return
 * addresses the walk's first HP_SITE_KEY_STEPS steps read (as far as it can step), found the
 * way the walk finds them (bounded reads within the stack, whatever the rules say). A
 * function of the frame and of the stack's contents alone, so a stack that holds what it held
 * when its entry was made finds that entry's set. Four steps: bench/alloc_bench's random
 * chains (about 1,600 stacks under 77 frames and stack pointers) then spread over the sets;
 * with two, the ways of a set mostly hold stacks that part further out, each a full check
 * (bench/model.sh's cost of ab1 and ab1-nofp against the sets keyed by the frame alone,
 * without and with frame pointers: two steps -10% and +6%, three -16% and -5%, four -20% and
 * -14%, six -18% and -12%). */
#define HP_SITE_KEY_STEPS 4
static inline uint64_t site_key(struct hp_walk_cache *wc, uintptr_t ip, uintptr_t sp, uintptr_t bp,
                                uintptr_t hi)
{
    uintptr_t hi16 = hi - 16, at;
    uint64_t key = ip;
    uint64_t r = wc->first_ip == ip ? wc->first_rule : hp_thread_rule(wc, ip);
    for (int k = 0; k < HP_SITE_KEY_STEPS; k++) {
        HP_WALK_STEP(r, sp, bp, hi16, at, out);
        uintptr_t v = *(const uintptr_t *)at;
        key = (key ^ v) * 0x9e3779b97f4a7c15ull;
        if (k + 1 < HP_SITE_KEY_STEPS)
            r = hp_thread_rule(wc, v);
    }
out:
    return key;
}

/* The lookup in the set of key (the frame's address, or site_key's), and on a miss what the
 * walk that follows needs to make an entry there. */
static inline __attribute__((always_inline)) uint32_t site_lookup(struct hp_walk_cache *wc, uint64_t key,
                                                                  uintptr_t ip, uintptr_t sp, uintptr_t bp,
                                                                  uintptr_t hi, int *truncated)
{
    struct hp_site_cache *sc = &wc->sites;
    /* Rules cached before code was unloaded: the walk that follows empties the sets. */
    if (HP_LIKELY(wc->gen == __atomic_load_n(&hp_code_gen, __ATOMIC_ACQUIRE))) {
        uint64_t s = site_set(key, sp, sc->mask);
        const struct hp_site_tag *tg = sc->tags[s];
        unsigned o = sc->order[s];
        /* Most recently used first: stacks that share the key come back in runs. */
        for (unsigned i = 0; i < HP_SITE_WAYS; i++) {
            unsigned w = (o >> (2 * i)) & 3;
            if (tg[w].ip != ip || tg[w].sp != sp)
                continue;
            const struct hp_site *b = &sc->body[s * HP_SITE_WAYS + w];
            if (b->room != hi - sp || !site_holds(b, sp, bp))
                continue;
            if (i)
                sc->order[s] = order_touch((uint8_t)o, w);
            sc->hits++;
            *truncated = b->truncated;
            return b->id;
        }
    }
    uint64_t most = sites_max(sc);
    if (HP_UNLIKELY(++sc->misses > (sc->mask + 1) * HP_SITE_WAYS) && sc->mask < most - 1)
        sites_alloc(sc, (sc->mask + 1) * 4 < most ? (sc->mask + 1) * 4 : most);
    sc->q_set = site_set(key, sp, sc->mask); /* (the sets may have grown) */
    sc->q_ip = ip;
    sc->q_sp = sp;
    sc->q_bp = bp;
    sc->q_hi = hi;
    sc->pending = 1;
    return 0;
}

/* A deep cache's lookup: out of line, so the common one stays as it was (not cold: in a
 * thread keyed deep it is every allocation's). */
static __attribute__((noinline)) uint32_t site_lookup_deep(struct hp_walk_cache *wc, uintptr_t ip,
                                                           uintptr_t sp, uintptr_t bp, uintptr_t hi,
                                                           int *truncated)
{
    return site_lookup(wc, site_key(wc, ip, sp, bp, hi), ip, sp, bp, hi, truncated);
}

uint32_t hp_cfi_site_find(struct hp_walk_cache *wc, uintptr_t ip, uintptr_t sp, uintptr_t bp,
                          uintptr_t hi, int *truncated)
{
    struct hp_site_cache *sc = &wc->sites;
    sc->pending = 0;
    if (HP_UNLIKELY(!sc->tags) && !sites_alloc(sc, HP_SITE_SETS_MIN)) {
        sc->off = UINT32_MAX; /* no memory for it: (nearly) never again */
        return 0;
    }
    if (HP_UNLIKELY(++sc->tries == HP_SITE_WINDOW))
        site_window(sc);
    if (HP_UNLIKELY(sc->deep))
        return site_lookup_deep(wc, ip, sp, bp, hi, truncated);
    return site_lookup(wc, ip, ip, sp, bp, hi, truncated);
}

/* The rule of frame k of the walk at wc's [b, ...) that the lookup of sc asked for. */
static uint64_t site_rule(struct hp_walk_cache *wc, const struct hp_site_cache *sc, long b, int k)
{
    uintptr_t ip = wc->ip[b + k];
    if (k == 0 && wc->first_ip == sc->q_ip)
        return wc->first_rule;
    return hp_thread_rule(wc, ip);
}

/* An entry being made (hp_cfi_site_add): its checks so far, as site_check adds them. */
struct site_build {
    struct hp_site *e;
    uint32_t m;                /* checks made */
    uint64_t lane[SITE_LANES]; /* the chains of checks 1.. */
    uintptr_t val0;            /* what check 0 reads */
    uintptr_t sp, lim;         /* the lookup's stack pointer; the farthest offset a check may have */
};

/* Check sb->m: the slot at `at` holds val (and its value goes into its lane's chain, or val0
 * for check 0). 0 when the slot cannot be an entry's: not 8-aligned, or past lim (the last slot
 * on the stack, at most 512 KiB up). */
static inline __attribute__((always_inline)) int site_check(struct site_build *sb, uintptr_t at,
                                                            uintptr_t val)
{
    uintptr_t off = at - sb->sp;
    if (off > sb->lim || (off & 7))
        return 0;
    sb->e->off[sb->m] = (uint16_t)(off >> 3);
    if (sb->m == 0)
        sb->val0 = val;
    else
        sb->lane[(sb->m - 1) % SITE_LANES] = site_step(sb->lane[(sb->m - 1) % SITE_LANES], val);
    ++sb->m;
    return 1;
}

/* Frame k of the walk at wc's [b, ...) found its CFA through rbp (or stepped by frame pointer),
 * with rbp bp: the caller's register, then compared as it is (*matters), or a value a frame
 * further in restored from the stack, then that slot is checked too (a frame with alloca at the
 * same stack pointer can have its frame base elsewhere), once for each restoring frame
 * (*checked: the frame whose restore was checked last). 0 when the entry cannot be made. */
static inline __attribute__((always_inline)) int site_check_bp(struct hp_walk_cache *wc,
                                                               struct site_build *sb, long b, int k,
                                                               int steps, uintptr_t bp, int *checked,
                                                               int *matters)
{
    /* Which frame further in restored the rbp it used, if any? */
    int j = k - 1;
    uint64_t rj = 0;
    for (; j >= 0; j--) {
        rj = site_rule(wc, &wc->sites, b, j);
        if (!(rj & HP_R_VALID) || (rj & (HP_R_FP | HP_R_RBP_SAVED)))
            break;
    }
    if (j < 0) {
        *matters = 1;
        return 1;
    }
    if (j == *checked)
        return 1;
    /* HP_R_FP and frames without call frame information read the caller's rbp at rbp;
     * HP_R_RBP_SAVED at the CFA (the slot + 8) plus the rule's offset */
    uintptr_t from = (!(rj & HP_R_VALID) || (rj & HP_R_FP))
                         ? wc->bp[b + j]
                         : wc->slot[b + j] + 8 + (uintptr_t)(intptr_t)(int16_t)(rj >> 16);
    if (steps + (int)sb->m - k >= HP_SITE_CHECKS || !site_check(sb, from, bp))
        return 0;
    *checked = j;
    return 1;
}

/* The walk at wc's [b, b + n) cannot be an entry seen from the lookup's sp and top. */
static HP_COLD void site_failed(struct hp_site_cache *sc, const struct hp_walk_cache *wc, long b, int n)
{
    sc->fail_gen = wc->walk_gen;
    sc->fail_base = (uint32_t)b;
    sc->fail_n = (uint32_t)n;
    sc->fail_sp = sc->q_sp;
    sc->fail_hi = sc->q_hi;
}

void hp_cfi_site_add(struct hp_walk_cache *wc, uint32_t id)
{
    struct hp_site_cache *sc = &wc->sites;
    if (!sc->pending)
        return;
    sc->pending = 0;
    if (sc->no_adds)
        return;
    /* The walk's frames are in wc's arrays, [base, base + n) (not when it was too deep for
     * them, nor when there was no walk). */
    long b = wc->base;
    if (!id || b >= HP_WALK_MAX || wc->res_out != &wc->ip[b] || !sc->tags)
        return;
    int n = HP_WALK_MAX - (int)b < wc->max ? HP_WALK_MAX - (int)b : wc->max;
    int trunc = wc->res_trunc;
    if (n > HP_SITE_FRAMES || wc->ip[b] != sc->q_ip)
        return;
    uintptr_t sp = sc->q_sp, room = sc->q_hi - sp;
    if (room < 8 || room > UINT32_MAX || (sp & 7))
        return;
    uint64_t s = sc->q_set;
    unsigned w = sc->order[s] >> 6; /* the least recently used way */
    struct hp_site *e = &sc->body[s * HP_SITE_WAYS + w];
    sc->tags[s][w].ip = 0; /* empty until the entry is whole */
    /* What the walk read, frame by frame: frame k's step read frame k + 1's address from
     * slot[k] (the last frame's step counts when it gave the walk's end: not when the walk
     * was cut at the depth limit, nor when there was no step). And where a frame found its
     * CFA through rbp, the rbp it used (site_check_bp). */
    int steps = n - 1 + (!trunc && wc->slot[b + n - 1] != (uintptr_t)&hp_walk_no_slot);
    struct site_build sb = {e, 0, {0, 0, 0, 0}, 0, sp, 0};
    int matters = 0, checked = -1;
    uintptr_t hi = sc->q_hi;
    /* (A walk that ended because its last frame could not step: whether that frame fails to
     * step again can depend on its rbp too; its slot is not read.) */
    int frames = trunc ? steps : n;
    if (steps > HP_SITE_CHECKS)
        return;
    /* Every slot checked must be on the stack walked (site_check): a walk that read one
     * elsewhere is not kept. */
    sb.lim = room - 8 < ((uintptr_t)UINT16_MAX << 3) ? room - 8 : ((uintptr_t)UINT16_MAX << 3);
    /* What follows depends only on the walk's frames, their rules (which change only with a
     * new walk cache generation of code: hp_walk_cache_reset), sp and the top: the walk that
     * failed last time, unchanged, fails again (a deep stack with frame pointers allocating in
     * a loop: deep_stack 40 tried it about 6,000 times in 200,000 allocations, 3,700
     * instructions each). */
    if (sc->fail_gen == wc->walk_gen && sc->fail_base == (uint32_t)b && sc->fail_n == (uint32_t)n &&
        sc->fail_sp == sp && sc->fail_hi == hi)
        return;
    for (int k = 0; k < frames; k++) {
        uintptr_t at = wc->slot[b + k], bp = wc->bp[b + k], fsp = wc->sp[b + k];
        /* A step through rbp takes a CFA within 2 GiB of it and on the stack: a frame whose
         * rbp is nowhere near (an ordinary register's value, in code without frame pointers)
         * did not use it, and its rule need not be looked up. */
        if (bp - (fsp - ((uintptr_t)1 << 31)) < hi - fsp + ((uintptr_t)1 << 32)) {
            uint64_t r = site_rule(wc, sc, b, k);
            if ((!(r & HP_R_VALID) || (r & (HP_R_FP | HP_R_CFA_RBP))) &&
                !site_check_bp(wc, &sb, b, k, steps, bp, &checked, &matters)) {
                site_failed(sc, wc, b, n);
                return;
            }
        }
        if (k == steps)
            break;
        if (!site_check(&sb, at, wc->ip[b + k + 1])) {
            site_failed(sc, wc, b, n);
            return;
        }
    }
    for (; sb.m && ((sb.m - 1) % SITE_LANES); sb.m++) { /* padding: the first check again */
        e->off[sb.m] = e->off[0];
        sb.lane[(sb.m - 1) % SITE_LANES] = site_step(sb.lane[(sb.m - 1) % SITE_LANES], sb.val0);
    }
    e->n = (uint8_t)sb.m;
    e->bp_matters = (uint8_t)matters;
    e->sum = site_fold(sb.lane[0], sb.lane[1], sb.lane[2], sb.lane[3], matters ? sc->q_bp : 0);
    e->val0 = sb.val0;
    e->room = (uint32_t)room;
    e->id = id;
    e->truncated = (uint8_t)trunc;
    sc->tags[s][w] = (struct hp_site_tag){sc->q_ip, sp};
    sc->order[s] = order_touch(sc->order[s], w);
    sc->adds++;
}

#else

void hp_walk_cache_forget(struct hp_walk_cache *wc) { wc->base = HP_WALK_MAX; }

uint32_t hp_cfi_site_find(struct hp_walk_cache *wc, uintptr_t ip, uintptr_t sp, uintptr_t bp,
                          uintptr_t hi, int *truncated)
{
    (void)wc, (void)ip, (void)sp, (void)bp, (void)hi, (void)truncated;
    return 0;
}

void hp_cfi_site_add(struct hp_walk_cache *wc, uint32_t id) { (void)wc, (void)id; }

#endif
