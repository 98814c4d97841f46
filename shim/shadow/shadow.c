/* The access shadow (shadow.h): reserving the planes, and clearing, summing and giving back a
 * block's counters. Also built into the instrumentation runtime (instrument/), which reserves a
 * shadow of its own when no shim is there, so both find each other at the fixed place. */
#include "shadow/shadow.h"
#include "shadow/shadow_internal.h"

#include <errno.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/uio.h>

#ifndef MAP_FIXED_NOREPLACE
#define MAP_FIXED_NOREPLACE 0x100000
#endif

#define PAGE 4096u

/* ---------- reserving ---------- */

/* The first bytes of plane 0 count granules 0 to 2, addresses 0..191, which no program can
 * access: they hold a marker by which another copy of this code recognises the shadow at the
 * fixed place, and where planes 1 and 2 went. */
#define SHADOW_MAGIC 0x6865617073686477ull /* "heapshdw" */
struct marker {
    uint64_t magic;
    uintptr_t wbase;
    uintptr_t hbase;
};

/* A 16 TiB plane at `at` (0: anywhere). Huge pages off: one written counter would otherwise
 * keep 2 MiB. Out of core dumps: most of it is zero, all of it is ours. */
static int map_plane(uintptr_t at, uintptr_t *got)
{
    long m = sys_mmap(at, HP_SHADOW_PLANE_SIZE, at ? MAP_FIXED_NOREPLACE : 0);
    if (m < 0 && m > -4096)
        return (int)m;
    if (at && (uintptr_t)m != at) {
        /* A kernel older than 4.17 took MAP_FIXED_NOREPLACE for a hint and put it elsewhere. */
        sys_munmap((uintptr_t)m, HP_SHADOW_PLANE_SIZE);
        return -EEXIST;
    }
    sys_madvise((uintptr_t)m, HP_SHADOW_PLANE_SIZE, MADV_NOHUGEPAGE);
    sys_madvise((uintptr_t)m, HP_SHADOW_PLANE_SIZE, MADV_DONTDUMP);
    *got = (uintptr_t)m;
    return 0;
}

/* Read the marker at the fixed place, whatever is mapped there: through the kernel, which
 * answers EFAULT for memory that cannot be read instead of faulting. */
static int read_fixed_marker(struct marker *mk)
{
    struct iovec local = {mk, sizeof *mk};
    struct iovec remote = {(void *)HP_SHADOW_FIXED_BASE, sizeof *mk};
    long pid = sys6(SYS_getpid, 0, 0, 0, 0, 0, 0);
    long r = sys6(SYS_process_vm_readv, pid, (long)&local, 1, (long)&remote, 1, 0);
    return r == (long)sizeof *mk && mk->magic == SHADOW_MAGIC ? 0 : -1;
}

static int reserve_base(struct hp_shadow *sh)
{
    uintptr_t b;
    int r = map_plane(HP_SHADOW_FIXED_BASE, &b);
    if (r == -EEXIST) {
        struct marker mk;
        if (read_fixed_marker(&mk) == 0) {
            sh->base = HP_SHADOW_FIXED_BASE;
            if (!sh->wbase)
                sh->wbase = __atomic_load_n(&((struct marker *)sh->base)->wbase, __ATOMIC_ACQUIRE);
            if (!sh->hbase)
                sh->hbase = __atomic_load_n(&((struct marker *)sh->base)->hbase, __ATOMIC_ACQUIRE);
            return 0;
        }
    }
    if (r != 0 && (r = map_plane(0, &b)) != 0)
        return r;
    struct marker *mk = (struct marker *)b;
    mk->wbase = mk->hbase = 0;
    __atomic_store_n(&mk->magic, SHADOW_MAGIC, __ATOMIC_RELEASE);
    sh->base = b;
    return 0;
}

/* Plane k (1 or 2) in *slot, the marker's entry for it: the one another copy published, else
 * one of ours at base + k * 16 TiB (a fixed distance) or, when that is taken or beyond the
 * address space (ENOMEM, past a plane 0 the kernel placed), anywhere. */
static int reserve_extra(uintptr_t base, unsigned k, uintptr_t *slot, uintptr_t *out)
{
    uintptr_t w = __atomic_load_n(slot, __ATOMIC_ACQUIRE);
    if (!w) {
        int r = map_plane(base + k * HP_SHADOW_PLANE_SIZE, &w);
        if (r)
            r = map_plane(0, &w);
        if (r)
            return r;
        uintptr_t none = 0;
        if (!__atomic_compare_exchange_n(slot, &none, w, 0, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE)) {
            sys_munmap(w, HP_SHADOW_PLANE_SIZE); /* another copy published one meanwhile */
            w = none;
        }
    }
    *out = w;
    return 0;
}

int hp_shadow_reserve(struct hp_shadow *sh, int planes)
{
    if (!sh->base) {
        int r = reserve_base(sh);
        if (r)
            return r;
    }
    struct marker *mk = (struct marker *)sh->base;
    int r = 0;
    if ((planes & HP_SHADOW_WRITES) && !sh->wbase)
        r = reserve_extra(sh->base, 1, &mk->wbase, &sh->wbase);
    if (!r && (planes & HP_SHADOW_WORDS) && !sh->hbase)
        r = reserve_extra(sh->base, 2, &mk->hbase, &sh->hbase);
    return r;
}

/* ---------- a block's counters ---------- */

/* Zero counters [c, e) that are not zero already: a store to a page never written would make
 * the kernel give it memory. */
static void zero_ctrs(uint64_t *c, uint64_t *e)
{
    for (; c < e; c++)
        if (*c)
            *c = 0;
}

/* The whole pages inside counters [c, e): [*lo, *hi), empty (lo == hi) when the span is below
 * HP_SHADOW_RELEASE_MIN, which is cleared by stores instead. */
static void inner_pages(uint64_t *c, uint64_t *e, uint64_t **lo, uint64_t **hi)
{
    uintptr_t a = ((uintptr_t)c + PAGE - 1) & ~(uintptr_t)(PAGE - 1);
    uintptr_t b = (uintptr_t)e & ~(uintptr_t)(PAGE - 1);
    if ((uintptr_t)e - (uintptr_t)c < HP_SHADOW_RELEASE_MIN || b <= a)
        a = b = (uintptr_t)c;
    *lo = (uint64_t *)a;
    *hi = (uint64_t *)b;
}

/* Clear counters [c, e) spanning at least HP_SHADOW_RELEASE_MIN: stores at the ends, whole
 * pages given back in between. */
static __attribute__((noinline)) void clear_large(uint64_t *c, uint64_t *e)
{
    uint64_t *lo, *hi;
    inner_pages(c, e, &lo, &hi);
    if (lo == hi) {
        zero_ctrs(c, e);
        return;
    }
    zero_ctrs(c, lo);
    zero_ctrs(hi, e);
    sys_madvise((uintptr_t)lo, (uintptr_t)hi - (uintptr_t)lo, MADV_DONTNEED);
}

/* Clear counters [c, e). Inline: most blocks cover a few granules, whose clear is a few loads
 * (an out-of-line clear with the page arithmetic was 36 instructions a block on
 * bench/alloc_bench, bench/access_alloc.sh --instr). */
static inline void clear_plane(uint64_t *c, uint64_t *e)
{
    if (__builtin_expect((uintptr_t)e - (uintptr_t)c < HP_SHADOW_RELEASE_MIN, 1))
        zero_ctrs(c, e);
    else
        clear_large(c, e);
}

void hp_shadow_clear(const struct hp_shadow *sh, uintptr_t p, size_t size)
{
    uint64_t n = hp_shadow_granules(p, size);
    if (!n || !sh->base)
        return;
    uint64_t *c = hp_shadow_ctr(sh->base, p);
    clear_plane(c, c + n);
    if (sh->wbase) {
        c = hp_shadow_ctr(sh->wbase, p);
        clear_plane(c, c + n);
    }
}

int hp_shadow_hist_shared;

/* Sum counters [c, e) of plane 0 into out (and hist, relative to first; atomic additions
 * when shared); clear them when clear. */
static void sum_counts(uint64_t *c, uint64_t *e, uint64_t *first, struct hp_shadow_sum *out,
                       uint64_t *hist, size_t hist_len, int clear, int shared)
{
    uint64_t acc = 0, touched = 0;
    for (; c < e; c++) {
        uint64_t raw = *c, v = raw & ~HP_SHADOW_ARMED; /* a small block's arming: no count */
        if (!raw)
            continue;
        if (clear)
            *c = 0;
        if (!v)
            continue;
        acc += v;
        touched++;
        size_t i = (size_t)(c - first);
        if (hist && i < hist_len) {
            if (shared)
                __atomic_fetch_add(&hist[i], v, __ATOMIC_RELAXED);
            else
                hist[i] += v;
        }
    }
    out->accesses += acc;
    out->touched += touched;
}

static void sum_writes(uint64_t *c, uint64_t *e, struct hp_shadow_sum *out, int clear)
{
    for (; c < e; c++) {
        uint64_t v = *c;
        if (v) {
            out->writes += v;
            if (clear)
                *c = 0;
        }
    }
}

/* Figures of [p, p + size); with clear, counters end at zero: those in whole pages of a large
 * block's span are summed, then their pages given back. */
static void walk(const struct hp_shadow *sh, uintptr_t p, size_t size, struct hp_shadow_sum *out,
                 uint64_t *hist, size_t hist_len, int clear, int shared)
{
    out->accesses = out->writes = out->touched = 0;
    out->granules = hp_shadow_granules(p, size);
    if (!out->granules || !sh->base)
        return;
    uint64_t *c = hp_shadow_ctr(sh->base, p), *e = c + out->granules, *lo = c, *hi = c;
    if (clear && out->granules * sizeof *c >= HP_SHADOW_RELEASE_MIN)
        inner_pages(c, e, &lo, &hi);
    if (lo == hi) { /* the common case: a block whose counters are cleared by stores */
        sum_counts(c, e, c, out, hist, hist_len, clear, shared);
    } else {
        sum_counts(c, lo, c, out, hist, hist_len, clear, shared);
        sum_counts(lo, hi, c, out, hist, hist_len, 0, shared);
        sum_counts(hi, e, c, out, hist, hist_len, clear, shared);
        sys_madvise((uintptr_t)lo, (uintptr_t)hi - (uintptr_t)lo, MADV_DONTNEED);
    }
    if (!sh->wbase)
        return;
    c = hp_shadow_ctr(sh->wbase, p);
    e = c + out->granules;
    lo = hi = c;
    if (clear)
        inner_pages(c, e, &lo, &hi);
    sum_writes(c, lo, out, clear);
    sum_writes(lo, hi, out, 0);
    sum_writes(hi, e, out, clear);
    if (hi != lo)
        sys_madvise((uintptr_t)lo, (uintptr_t)hi - (uintptr_t)lo, MADV_DONTNEED);
}

enum { HIST_ADD, HIST_ATOMIC, HIST_SET }; /* how a take puts counts into hist */

/* The common take: plane 0 alone (inline builds), a block whose counters are cleared by stores.
 * One loop and no page arithmetic: through walk, a block of one or two granules cost about 190
 * instructions, most of them walk's and sum_counts' fixed part (callgrind, Lua built with
 * heapprof-cc, bench/access_alloc.sh). */
static inline void take_small(uint64_t *c, uint64_t n, struct hp_shadow_sum *out, uint64_t *hist,
                              size_t hist_len, int how)
{
    uint64_t acc = 0, touched = 0;
    for (uint64_t i = 0; i < n; i++) {
        uint64_t raw = c[i], v = raw & ~HP_SHADOW_ARMED; /* as sum_counts: arming is no count */
        if (how == HIST_SET)
            hist[i] = v; /* (every bin: the caller's array is not cleared) */
        if (!raw)
            continue;
        c[i] = 0;
        if (!v)
            continue;
        acc += v;
        touched++;
        if (how != HIST_SET && hist && i < hist_len) {
            if (how == HIST_ATOMIC)
                __atomic_fetch_add(&hist[i], v, __ATOMIC_RELAXED);
            else
                hist[i] += v;
        }
    }
    out->accesses = acc;
    out->writes = 0;
    out->granules = n;
    out->touched = touched;
}

/* Inlined into each caller, so that how is a constant there. */
static inline __attribute__((always_inline)) void take(const struct hp_shadow *sh, uintptr_t p,
                                                       size_t size, struct hp_shadow_sum *out,
                                                       uint64_t *hist, size_t hist_len, int how)
{
    uint64_t n = hp_shadow_granules(p, size);
    if (sh->base && !sh->wbase && n && n * sizeof(uint64_t) < HP_SHADOW_RELEASE_MIN) {
        take_small(hp_shadow_ctr(sh->base, p), n, out, hist, hist_len, how);
        return;
    }
    if (how == HIST_SET)
        for (uint64_t i = 0; i < n && i < hist_len; i++)
            hist[i] = 0;
    walk(sh, p, size, out, hist, hist_len, 1, how == HIST_ATOMIC);
}

/* Atomic additions to a context's histogram only with several threads (freeing blocks of one
 * context at once): a locked instruction per granule was a third of a small block's take. */
void hp_shadow_take(const struct hp_shadow *sh, uintptr_t p, size_t size,
                    struct hp_shadow_sum *out, uint64_t *hist, size_t hist_len)
{
    if (__atomic_load_n(&hp_shadow_hist_shared, __ATOMIC_RELAXED))
        take(sh, p, size, out, hist, hist_len, HIST_ATOMIC);
    else
        take(sh, p, size, out, hist, hist_len, HIST_ADD);
}

void hp_shadow_take_own(const struct hp_shadow *sh, uintptr_t p, size_t size,
                        struct hp_shadow_sum *out, uint64_t *hist, size_t hist_len)
{
    take(sh, p, size, out, hist, hist_len, HIST_SET);
}

void hp_shadow_peek(const struct hp_shadow *sh, uintptr_t p, size_t size,
                    struct hp_shadow_sum *out, uint64_t *hist, size_t hist_len)
{
    walk(sh, p, size, out, hist, hist_len, 0, __atomic_load_n(&hp_shadow_hist_shared, __ATOMIC_RELAXED));
}

/* Whole pages only: the counters at either end may belong to neighbouring blocks. */
static void release_plane(uintptr_t base, uintptr_t p, size_t size)
{
    uint64_t n = hp_shadow_granules(p, size);
    if (!n)
        return;
    uintptr_t c = (uintptr_t)hp_shadow_ctr(base, p), e = c + n * sizeof(uint64_t);
    uintptr_t a = (c + PAGE - 1) & ~(uintptr_t)(PAGE - 1), b = e & ~(uintptr_t)(PAGE - 1);
    if (b > a)
        sys_madvise(a, b - a, MADV_DONTNEED);
}

void hp_shadow_release(const struct hp_shadow *sh, uintptr_t p, size_t size)
{
    if (sh->base)
        release_plane(sh->base, p, size);
    if (sh->wbase)
        release_plane(sh->wbase, p, size);
    if (sh->hbase) { /* a byte per word: the pages inside the range's words */
        uintptr_t c = (uintptr_t)hp_shadow_word(sh->hbase, p);
        uintptr_t e = c + hp_shadow_words(size);
        uintptr_t a = (c + PAGE - 1) & ~(uintptr_t)(PAGE - 1), b = e & ~(uintptr_t)(PAGE - 1);
        if (b > a)
            sys_madvise(a, b - a, MADV_DONTNEED);
    }
}
