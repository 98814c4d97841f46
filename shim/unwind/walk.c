/* The cfi walk: follows a stack through code without frame pointers with the rules of the
 * frames' return addresses, a few loads per frame, and stops early where it joins the thread's
 * previous walk (struct hp_walk_cache). */
#include "unwind/unwind_internal.h"

#if defined(__x86_64__)

/* Is ra in an executable mapping (JIT code)? Code made since the table of mappings was last read
 * counts once it is read again (at most once a second). */
static int in_exec_mapping(uintptr_t ra)
{
    if (hp_is_exec_mapping(ra))
        return 1;
    hp_maps_refresh(0);
    return hp_is_exec_mapping(ra);
}

/* Does a frame whose return address is ra, with rule r, count? Only if the address is code: it
 * has call frame information or lies in a loaded object (found through the loader's own list,
 * so objects loaded a moment ago count), or in an executable mapping. */
static inline int is_code(uint64_t r, uintptr_t ra)
{
    return (r & (HP_R_VALID | HP_R_IN_OBJECT)) || in_exec_mapping(ra);
}

const uintptr_t hp_walk_no_slot = 0;

/* A walk without a thread cache: straight into pcs, each rule from the shared cache, the last
 * two remembered (recursion and loops repeat return addresses). */
static int walk_plain(uintptr_t ip, uintptr_t sp, uintptr_t bp, uintptr_t hi16, uintptr_t *pcs,
                      int max, int *truncated, uint64_t r)
{
    uintptr_t memo_ra[2] = {ip, 0};
    uint64_t memo_r[2] = {r, 0};
    int n = 0;
    for (;;) {
        if (n == max) {
            *truncated = 1;
            break;
        }
        pcs[n++] = ip;
        uintptr_t at;
        HP_WALK_STEP(r, sp, bp, hi16, at, out);
        ip = *(const uintptr_t *)at;
        if (ip == memo_ra[0]) {
            r = memo_r[0];
        } else if (ip == memo_ra[1]) {
            r = memo_r[1];
        } else {
            r = ip > 4096 ? hp_shared_rule(ip) : 0;
            memo_ra[1] = memo_ra[0];
            memo_r[1] = memo_r[0];
            memo_ra[0] = ip;
            memo_r[0] = r;
        }
        if (!is_code(r, ip))
            break;
    }
out:
    return n;
}

void hp_walk_cache_reset(struct hp_walk_cache *wc)
{
    for (int i = HP_WALK_MAX; i < HP_WALK_MAX + 3; i++) {
        wc->slot[i] = (uintptr_t)&hp_walk_no_slot;
        wc->ip[i + 1] = 0;
    }
    wc->base = HP_WALK_MAX;
    wc->walk_gen++;
    wc->shim_at = HP_WALK_MAX;
    wc->hash[HP_WALK_MAX] = 0; /* the chain of no frames */
    wc->sp[HP_WALK_MAX] = UINTPTR_MAX; /* ends every search by stack pointer */
}

/* Do frames k.. of the previous walk still describe the stack, as far as frame lim? Each
 * frame's return-address slot must still hold the next frame's address (ip[HP_WALK_MAX]: the
 * value the last step read). Slots k .. lim - 1 are checked.
 *
 * The slots of saved frame registers need no check: with the same return addresses at the
 * same stack pointers, every frame outside k is the same activation or one at the very same
 * place, and a frame register that a rule reads is the frame base such an activation set up. */
static inline uintptr_t slot_differs(const struct hp_walk_cache *wc, long k)
{
    return *(const uintptr_t *)wc->slot[k] ^ wc->ip[k + 1];
}

static inline int suffix_holds(const struct hp_walk_cache *wc, long k, long lim)
{
    /* A test per four slots, not per slot (k < lim): a join that holds reads them all anyway,
     * and one that fails (a stack that parts from the previous one further out, as in
     * bench/alloc_bench's random chains) mostly fails in the first four. The
     * last step may read up to three slots past lim: past the end they are padding that always
     * holds; before it, slots of frames further out, on the walked stack (as safe to read as
     * the others), which at worst make a join that would have held fail, and the walk go on. */
    uintptr_t d;
    do {
        d = slot_differs(wc, k) | slot_differs(wc, k + 1) | slot_differs(wc, k + 2) | slot_differs(wc, k + 3);
        k += 4;
    } while (!d && k < lim);
    return d == 0;
}

/* K to the power e (mod 2^64), for the hash of the innermost frames of a deeper walk. */
static uint64_t hash_pow(unsigned e)
{
    uint64_t r = 1, b = HP_STACK_HASH_K;
    for (; e; e >>= 1, b *= b)
        if (e & 1)
            r *= b;
    return r;
}

/* The new frames are too many to sit in front of the reused ones (over HP_WALK_MAX in all):
 * hand out the innermost max frames (in wc->pcs) and start afresh next time. */
static HP_COLD int walk_too_deep(struct hp_walk_cache *wc, int m, int reuse, int trunc)
{
    const int END = HP_WALK_MAX;
    uintptr_t *pcs = wc->pcs;
    int n = 0, max = wc->max;
    for (int k = 0; k < m && n < max; k++)
        pcs[n++] = wc->nf_ip[k];
    for (int k = reuse; k < END && n < max; k++)
        pcs[n++] = wc->ip[k];
    wc->res_out = pcs;
    wc->res_noshim = 0; /* (the capture looks) */
    wc->res_trunc = trunc || m + (END - reuse) > max;
    wc->res_hash = hp_stack_hash(pcs, n);
    hp_walk_cache_reset(wc);
    return n;
}

/* The thread's rules and previous walk date from before code was unloaded. */
static HP_COLD void walk_cache_new_code(struct hp_walk_cache *wc, uint32_t gen)
{
    hp_memset(wc->rules, 0, sizeof wc->rules);
    wc->first_ip = 0;
    wc->first_rule = 0;
    hp_walk_cache_reset(wc);
    hp_sites_clear(&wc->sites);
    wc->gen = gen;
}

/* gcc can build one function without a frame pointer (one more register); clang has no such
 * attribute and gets by with the registers it has. */
#if defined(__GNUC__) && !defined(__clang__)
#define WALK_NO_FRAME_POINTER __attribute__((optimize("omit-frame-pointer")))
#else
#define WALK_NO_FRAME_POINTER
#endif

enum {
    WS_RUN,           /* go on from the frame at ip */
    WS_MISS,          /* stopped: the rule for ip is not in the thread's cache */
    WS_NOT_DESCRIBED, /* stopped: ip has no call frame information (r lacks HP_R_VALID) */
    WS_NOT_CODE,      /* ip is not code: end the walk before it */
};

/* The innermost frame of [k, HP_WALK_MAX) in the shim, HP_WALK_MAX for none. */
static HP_COLD long shim_scan(const struct hp_walk_cache *wc, long k, uintptr_t lo, uintptr_t hi)
{
    for (; k < HP_WALK_MAX; k++)
        if (wc->ip[k] - lo < hi - lo)
            break;
    return k;
}

/* The end of a walk (walk_run): its m new frames, in wc->nf_*, go right below the frames of the
 * previous walk it joined, reuse.. (or at the top end, reuse HP_WALK_MAX: then last_read is
 * what its last step read), and their chain values are computed from the outside in. Returns
 * the walk's depth, its results in wc->res_*. Inlined: walk_run calls nothing on its way. */
static inline __attribute__((always_inline)) int walk_place(struct hp_walk_cache *wc, long m, long reuse,
                                                            int trunc, uintptr_t last_read, long max,
                                                            uintptr_t hi16)
{
    const long END = HP_WALK_MAX;
    if (HP_UNLIKELY(m > reuse))
        return walk_too_deep(wc, (int)m, (int)reuse, trunc);
    long base = reuse - m;
    if (reuse == END)
        wc->ip[END] = last_read;
    /* The shim's frames among the reused ones are known from the walk that made them (with the
     * same range of the shim's code); only the new frames are looked at. (hi - lo: 0 while the
     * range is not known, when no address is the shim's, as with hp_in_shim.) */
    uintptr_t slo = hp_shim_lo, shi = hp_shim_hi;
    long sa = END;
    if (reuse < END) {
        sa = wc->shim_at;
        if (HP_UNLIKELY(sa < reuse || wc->shim_lo != slo || wc->shim_hi != shi))
            sa = shim_scan(wc, reuse, slo, shi);
    }
    uint64_t h = wc->hash[reuse];
    for (long k = m - 1; k >= 0; k--) {
        long x = base + k;
        uintptr_t fip = wc->nf_ip[k];
        if (HP_UNLIKELY(fip - slo < shi - slo))
            sa = x;
        wc->ip[x] = fip;
        wc->slot[x] = wc->nf_slot[k];
        wc->sp[x] = wc->nf_sp[k];
        wc->bp[x] = wc->nf_bp[k];
        h = hp_stack_hash_step(h, fip);
        wc->hash[x] = h;
    }
    if (m || base != wc->base)
        wc->walk_gen++;
    wc->base = (int)base;
    wc->shim_at = (int)sa;
    wc->shim_lo = slo;
    wc->shim_hi = shi;
    wc->truncated = trunc;
    wc->stack_hi = hi16 + 16;
    long n = END - base;
    wc->res_out = &wc->ip[base];
    if (n > max) {
        /* The innermost max frames: their chain value without the frames outside them. */
        n = max;
        trunc = 1;
        h -= hash_pow((unsigned)max) * wc->hash[base + max];
    }
    wc->res_hash = hp_stack_hash_final(h);
    wc->res_trunc = trunc;
    wc->res_noshim = sa >= base + n;
    return (int)n;
}

/* Walk on from wc->st until the walk joins the previous one, reaches the depth limit, cannot
 * step, or meets an address that is not code; put the new frames in place and return how many
 * frames the walk has (the results in wc->res_*). Returns -1 instead when the next frame's
 * address needs more than the thread's rule cache (st->why says what); the caller finds out
 * and runs this again. It calls nothing on the way, so the walk's state stays in registers,
 * and (built by gcc) has no frame pointer of its own, for one more. */
static __attribute__((noinline)) HP_HOT WALK_NO_FRAME_POINTER int walk_run(struct hp_walk_cache *wc)
{
    /* The state is in wc, not in a register of its own; so is frame j's stack pointer: the
     * loop needs every register it can get. */
    struct hp_walk_state *st = &wc->st;
    const long END = HP_WALK_MAX, max = wc->max;
    const uintptr_t hi16 = wc->hi16;
    uintptr_t ip = st->ip, sp = st->sp, bp = st->bp, at, last_read = 0;
    uint64_t r = st->r;
    long m = st->m, j = st->j, reuse = END; /* reuse: where the previous walk is joined */
    int trunc = 0;
    if (HP_UNLIKELY(st->why == WS_NOT_CODE)) {
        last_read = ip;
        goto done;
    }
    for (;;) {
        if (HP_UNLIKELY(sp >= wc->sp[j])) {
            while (wc->sp[j] < sp)
                j++;
            /* A previous walk cut at the depth limit lacks its outer frames: joining it is
             * right only if it still gives as many frames as a walk from here would take.
             * Only the slots up to the frame after the max-th are read: frames further out
             * are not handed out (and are checked again by a walk that needs them). */
            if (wc->sp[j] == sp && wc->ip[j] == ip && wc->bp[j] == bp &&
                (!wc->truncated || m + (END - j) >= max) &&
                suffix_holds(wc, j, j - m + max < END ? j - m + max : END)) {
                reuse = j;
                trunc = wc->truncated;
                goto done;
            }
        }
        if (m == max) {
            /* Nothing read: the next walk joining here stops here too. */
            wc->nf_slot[m - 1] = (uintptr_t)&hp_walk_no_slot;
            trunc = 1;
            goto done;
        }
        wc->nf_ip[m] = ip;
        wc->nf_sp[m] = sp;
        wc->nf_bp[m] = bp;
        HP_WALK_STEP(r, sp, bp, hi16, at, no_step);
        wc->nf_slot[m++] = at;
        ip = *(const uintptr_t *)at;
        uint64_t i = ip & (HP_WALK_RULES - 1);
        if (HP_UNLIKELY(wc->rules[i].ra != ip)) {
            st->why = WS_MISS;
            goto suspend;
        }
        r = wc->rules[i].rule;
        if (HP_UNLIKELY(!(r & (HP_R_VALID | HP_R_IN_OBJECT)))) {
            st->why = WS_NOT_DESCRIBED;
            goto suspend;
        }
    }
no_step:
    wc->nf_slot[m++] = (uintptr_t)&hp_walk_no_slot;
done:
    return walk_place(wc, m, reuse, trunc, last_read, max, hi16);
suspend:
    st->ip = ip;
    st->sp = sp;
    st->bp = bp;
    st->m = m;
    st->j = j;
    return -1;
}

int hp_cfi_walk_plain(uintptr_t ip, uintptr_t sp, uintptr_t bp, uintptr_t stack_hi, uintptr_t *pcs,
                      int max, int *truncated, uint64_t *hash)
{
    *hash = hp_stack_hash(pcs, 0);
    if (!hp_rule_cache || stack_hi < 32)
        return 0;
    uint64_t r0 = ip > 4096 ? hp_shared_rule(ip) : 0;
    if (!is_code(r0, ip))
        return 0;
    int n = walk_plain(ip, sp, bp, stack_hi - 16, pcs, max, truncated, r0);
    *hash = hp_stack_hash(pcs, n);
    return n;
}

int hp_cfi_walk(uintptr_t ip, uintptr_t sp, uintptr_t bp, uintptr_t stack_hi, uintptr_t *pcs, int max,
                int *truncated, struct hp_walk_cache *wc, const uintptr_t **out, uint64_t *hash)
{
    *out = pcs;
    if (!wc)
        return hp_cfi_walk_plain(ip, sp, bp, stack_hi, pcs, max, truncated, hash);
    *hash = hp_stack_hash(pcs, 0);
    wc->res_out = NULL; /* (for hp_cfi_site_add) no walk in the cache */
    wc->res_noshim = 0;
    if (!hp_rule_cache || stack_hi < 32)
        return 0;
    uintptr_t hi16 = stack_hi - 16;
    uint32_t gen = __atomic_load_n(&hp_code_gen, __ATOMIC_ACQUIRE);
    if (HP_UNLIKELY(wc->gen != gen))
        walk_cache_new_code(wc, gen);
    /* The first address must be code too. */
    uint64_t r;
    if (wc->first_ip == ip) {
        r = wc->first_rule; /* allocations keep coming through the same few wrappers */
    } else {
        r = hp_thread_rule(wc, ip);
        wc->first_ip = ip;
        wc->first_rule = r;
    }
    if (!is_code(r, ip))
        return 0;
    wc->max = max;
    wc->pcs = pcs;
    /* The previous walk is usable only on the same stack; the walk follows its frames by
     * stack pointer (both walks go up the stack). */
    long j = wc->base < HP_WALK_MAX && wc->stack_hi == stack_hi ? wc->base : HP_WALK_MAX;
    wc->hi16 = hi16;
    int n;
    if (j < HP_WALK_MAX && wc->sp[j] == sp) {
        /* The previous walk's first frame again (a loop allocating): walk_run's first join,
         * without its call and state. */
        if (wc->ip[j] == ip && wc->bp[j] == bp && (!wc->truncated || HP_WALK_MAX - j >= max) &&
            suffix_holds(wc, j, j + max < HP_WALK_MAX ? j + max : HP_WALK_MAX)) {
            n = walk_place(wc, 0, j, wc->truncated, 0, max, hi16);
            goto done;
        }
        /* walk_run would try that join first and fail the same way; its next frame is above
         * sp[j], where it looks from j + 1 on as it would from j. */
        j++;
    }
    struct hp_walk_state *st = &wc->st;
    *st = (struct hp_walk_state){ip, sp, bp, r, 0, j, WS_RUN}; /* sp[END] is UINTPTR_MAX */
    while ((n = walk_run(wc)) < 0) {
        if (st->why == WS_MISS) {
            st->r = hp_thread_rule_miss(wc, st->ip, st->ip & (HP_WALK_RULES - 1));
            if (st->r & (HP_R_VALID | HP_R_IN_OBJECT)) {
                st->why = WS_RUN;
                continue;
            }
        }
        /* No call frame information: code only if in an executable mapping, then stepped with
         * its frame pointer. */
        st->r = 0;
        st->why = in_exec_mapping(st->ip) ? WS_RUN : WS_NOT_CODE;
    }
done:
    *out = wc->res_out;
    *hash = wc->res_hash;
    *truncated = wc->res_trunc;
    return n;
}

#else

int hp_cfi_walk(uintptr_t ip, uintptr_t sp, uintptr_t bp, uintptr_t stack_hi, uintptr_t *pcs, int max,
                int *truncated, struct hp_walk_cache *wc, const uintptr_t **out, uint64_t *hash)
{
    (void)ip, (void)sp, (void)bp, (void)stack_hi, (void)max, (void)truncated, (void)wc;
    *out = pcs;
    *hash = hp_stack_hash(pcs, 0);
    return 0;
}

int hp_cfi_walk_plain(uintptr_t ip, uintptr_t sp, uintptr_t bp, uintptr_t stack_hi, uintptr_t *pcs,
                      int max, int *truncated, uint64_t *hash)
{
    (void)ip, (void)sp, (void)bp, (void)stack_hi, (void)max, (void)truncated;
    *hash = hp_stack_hash(pcs, 0);
    return 0;
}

void hp_walk_cache_reset(struct hp_walk_cache *wc) { wc->base = HP_WALK_MAX; }

#endif
