/* The capture entry points: the call stack of an allocation by the unwinder chosen (cfi, frame
 * pointers or libunwind), without the shim's own frames nor those of a forwarding allocator in
 * front of it; the site cache's lookup before the walk. */
#include "unwind/unwind_internal.h"
#include "backend/backend.h"

int hp_use_cfi;

/* Leave the shim's frames, then follow the program's with their call frame information. */
static int capture_cfi(uintptr_t *pcs, int max, int *truncated, struct hp_walk_cache *wc,
                       const uintptr_t **out, uint64_t *hash, uintptr_t fp, int *noshim)
{
    uintptr_t ret, sp, bp, hi;
    struct hp_site_cache *sc = wc ? &wc->sites : NULL;
    if (sc && sc->pending && sc->q_frame == fp) {
        /* hp_stack_site_find left the shim's frames from this very frame a moment ago */
        ret = sc->q_ip;
        sp = sc->q_sp;
        bp = sc->q_bp;
        hi = sc->q_hi;
    } else if (!hp_leave_shim(fp, &ret, &sp, &bp, &hi)) {
        return 0;
    }
    int n = hp_cfi_walk(ret, sp, bp, hi, pcs, max, truncated, wc, out, hash);
    if (wc)
        *noshim = wc->res_noshim;
    return n;
}

uint32_t hp_stack_site_find(struct hp_walk_cache *wc, uintptr_t frame, int *truncated)
{
    if (hp_cfi_site_skip(wc) || !__atomic_load_n(&hp_use_cfi, __ATOMIC_RELAXED) || !frame) {
        wc->sites.pending = 0;
        return 0;
    }
    uintptr_t ret, sp, bp, hi;
    if (!hp_leave_shim(frame, &ret, &sp, &bp, &hi))
        return 0;
    uint32_t id = hp_cfi_site_find(wc, ret, sp, bp, hi, truncated);
    wc->sites.q_frame = frame;
    return id;
}

/* The same without a walk cache, for hp_stack_capture_nested (a function of its own: the
 * allocation path's walk stays the only caller of hp_cfi_walk, which is then inlined there). */
static HP_COLD int capture_cfi_plain(uintptr_t *pcs, int max, int *truncated, uint64_t *hash,
                                     uintptr_t fp)
{
    uintptr_t ret, sp, bp, hi;
    if (!hp_leave_shim(fp, &ret, &sp, &bp, &hi))
        return 0;
    return hp_cfi_walk_plain(ret, sp, bp, hi, pcs, max, truncated, hash);
}

/* Leave off the top of a stack the frames of a library in front of the shim that hands every
 * allocation on to it (hp_be.fwd_lo/hi): the program's call into it is the site. */
static HP_COLD int drop_forwarder(const uintptr_t **out, int n, uint64_t *hash)
{
    const uintptr_t *f = *out;
    int k = 0;
    while (k < n && f[k] >= hp_be.fwd_lo && f[k] < hp_be.fwd_hi)
        k++;
    if (k) {
        *out = f + k;
        *hash = hp_stack_hash(f + k, n - k);
    }
    return n - k;
}

static int capture(uintptr_t *pcs, int max, int *truncated, struct hp_walk_cache *wc,
                   const uintptr_t **out, uint64_t *hash, uintptr_t frame, int *noshim);

/* A walk that went on through a signal frame into a call of the shim's that the signal
 * interrupted (outside a recording: the handler's allocation is then an ordinary one) came to
 * the shim's frames of that call: they are left out, into pcs, as hp_stack_capture_nested and
 * libunwind's capture leave them out, so the handler's stack reads as if it had interrupted
 * the program at its call into the allocator. (The cfi walk's frames are in its cache, which
 * stays as it is.) Frame 0 is never the shim's: every capture starts past its frames. */
static inline int drop_interrupted_shim(uintptr_t *pcs, const uintptr_t **out, int n, uint64_t *hash)
{
    const uintptr_t *f = *out;
    int i = 1;
    while (i < n && !hp_in_shim(f[i]))
        i++;
    if (HP_LIKELY(i >= n))
        return n;
    int k = 0;
    for (int j = 0; j < n; j++)
        if (!hp_in_shim(f[j]))
            pcs[k++] = f[j]; /* (k <= j: in place when f is pcs) */
    *out = pcs;
    *hash = hp_stack_hash(pcs, k);
    return k;
}

int hp_stack_capture(uintptr_t *pcs, int max, int *truncated, struct hp_walk_cache *wc,
                     const uintptr_t **out, uint64_t *hash, uintptr_t frame)
{
    int noshim = 0; /* the cfi walk with the thread's cache knows whether there are any */
    int n = capture(pcs, max, truncated, wc, out, hash, frame, &noshim);
    if (!noshim)
        n = drop_interrupted_shim(pcs, out, n, hash);
    if (HP_UNLIKELY(hp_be.fwd_hi != 0) && n > 0)
        n = drop_forwarder(out, n, hash);
    return n;
}

static int capture(uintptr_t *pcs, int max, int *truncated, struct hp_walk_cache *wc,
                   const uintptr_t **out, uint64_t *hash, uintptr_t frame, int *noshim)
{
    *out = pcs;
    *hash = hp_stack_hash(pcs, 0);
    /* The walk of the shim's frames starts at the entry point's frame when the caller knows
     * it: fewer of our own frames to step over. */
    if (!frame)
        frame = (uintptr_t)__builtin_frame_address(0);
    if (__atomic_load_n(&hp_use_cfi, __ATOMIC_RELAXED))
        return capture_cfi(pcs, max, truncated, wc, out, hash, frame, noshim);
    if (HP_UNLIKELY(__atomic_load_n(&hp_unw_deferred, __ATOMIC_RELAXED))) {
        /* The frame-pointer walk names the caller; once libunwind is loaded it walks again. */
        int n = hp_capture_fp(pcs, max, truncated, frame);
        if (__atomic_load_n(&hp_unw_deferred, __ATOMIC_ACQUIRE) == HP_UNW_LOADING)
            hp_wait_libunwind_load();
        else if (n > 0)
            hp_try_deferred_libunwind(pcs[0]);
        if (!__atomic_load_n(&hp_unw_backtrace_fn, __ATOMIC_ACQUIRE)) {
            *hash = hp_stack_hash(pcs, n);
            return n;
        }
        *truncated = 0;
    }
    int n = hp_unw_backtrace_fn ? hp_capture_unwind_guarded(pcs, max, truncated, frame)
                             : hp_capture_fp(pcs, max, truncated, frame);
    *hash = hp_stack_hash(pcs, n);
    return n;
}

int hp_stack_capture_nested(uintptr_t *pcs, int max, int *truncated, const uintptr_t **out,
                            uint64_t *hash, uintptr_t frame)
{
    *out = pcs;
    *hash = hp_stack_hash(pcs, 0);
    /* Finding the stack's bounds reads /proc/self/maps under a lock the interrupted code may
     * hold. */
    if (!hp_tls.stack_hi)
        return -1;
    if (!frame)
        frame = (uintptr_t)__builtin_frame_address(0);
    int n;
    if (__atomic_load_n(&hp_use_cfi, __ATOMIC_RELAXED))
        n = capture_cfi_plain(pcs, max, truncated, hash, frame);
    /* libunwind once loaded, unless the interrupted code is inside it (it may hold libunwind's
     * locks): then, as before it is loaded and with unwinder=fp, frame pointers. */
    else if (!hp_tls.in_libunwind && !__atomic_load_n(&hp_unw_deferred, __ATOMIC_RELAXED) &&
             __atomic_load_n(&hp_unw_backtrace_fn, __ATOMIC_ACQUIRE))
        n = hp_capture_unwind_guarded(pcs, max, truncated, frame);
    else
        n = hp_capture_fp(pcs, max, truncated, frame);
    /* A walk that goes on through the signal frame comes to the shim's frames of the
     * interrupted call: left out, the handler's stack reads as if it had interrupted the
     * program at its call into the allocator. */
    int k = 0;
    for (int i = 0; i < n; i++)
        if (!hp_in_shim(pcs[i]))
            pcs[k++] = pcs[i];
    *out = pcs;
    *hash = hp_stack_hash(pcs, k);
    if (HP_UNLIKELY(hp_be.fwd_hi != 0) && k > 0)
        k = drop_forwarder(out, k, hash);
    return k;
}
