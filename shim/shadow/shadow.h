/* shadow/: the access shadow. One 8-byte counter per 64-byte granule of the address space,
 * incremented by separately instrumented code (clang -fmemory-profile inline or callbacks, gcc's
 * asan callbacks through instrument/); read and cleared here per block. Raw system calls only:
 * nothing here allocates, locks or depends on another shim module.
 *
 * The mapping (clang's MemProf mapping, scale 3, granularity 64):
 *
 *     counter(a) = base + ((a & ~63) >> 3)
 *
 *   address space (47 bits, 128 TiB)                plane 0 at base (16 TiB)
 *   +--------+--------+--------+--------+-----      +---+---+---+---+-----
 *   |  g0    |  g1    |  g2    |  g3    | ...       |c0 |c1 |c2 |c3 | ...
 *   +--------+--------+--------+--------+-----      +---+---+---+---+-----
 *   0        64       128      192                  base  +8  +16 +24
 *   granule gi = bytes [64i, 64i+64)  ----------->  counter ci = 8 bytes at base + 8i
 *
 * Planes: every plane is indexed the same way from its own base, 16 TiB each, reserved with
 * MAP_NORESERVE (address space, no memory) and without huge pages, so a counter costs memory
 * only once its 4 KiB page (512 counters: 32 KiB of heap) is written.
 *   plane 0 (base)   every access: inline code writes it, callbacks too. Always there.
 *   plane 1 (wbase)  writes only: fed by callback builds (clang callbacks, gcc), which know
 *                    loads from stores; inline builds never touch it. Reserved at base + 16 TiB
 *                    (a fixed distance) when free, else anywhere; reads = plane 0 - plane 1.
 *   plane 2 (hbase)  words (words.c): one 1-byte counter per 8-byte word, loads and stores
 *                    together, for the per-word histogram of small blocks. Fed by callback
 *                    builds only (inline code has no room for a second, conditional update);
 *                    reserved at base + 32 TiB when free, else anywhere, and only when a callback
 *                    module attaches with word histograms on (hp_shadow_word_max):
 *
 *     word(a) = hbase + (a >> 3)        a block's word i = its bytes [8i, 8i + 8)
 *
 *                    Counted only in granules the shim armed: HP_SHADOW_ARMED, the top bit of
 *                    a plane-0 counter (no count reaches 2^63), set at allocation on the
 *                    granules of blocks of up to hp_shadow_word_max bytes and cleared with the
 *                    counter at free. A callback reads the old plane-0 counter anyway to add 1:
 *                    one test of its sign decides, so accesses to anything else (large arrays,
 *                    globals, larger blocks) never touch plane 2, which costs memory only for
 *                    the small blocks' words. A word counter saturates at HP_WORD_MAX (255).
 * Room for a later plane, not built: false sharing (one 8-byte record per 64-byte cache line,
 * the same index as plane 0: last writing thread and a count of writes by another thread than
 * the previous accessor, Predator-style). It needs callbacks: inline code only increments.
 *
 * Blocks never share a counter. The shim puts a 32-byte header immediately before every user
 * pointer (core header.h: raw .. padding .. header .. user), inside the block it got from the
 * allocator, and user pointers are multiples of 32 (plain blocks, memalign'd blocks with
 * user = raw + align, aligned blocks placed in a plain block, mimalloc's offset blocks, blocks
 * moved by realloc: all place the user pointer at >= raw + 32 on a 32-byte boundary).
 *   - A block's first granule starts at its header or at its user pointer: user % 64 is 0
 *     (granule starts at user: page-start blocks, every alignment >= 64) or 32 (granule starts
 *     at user - 32, the header's first byte). Either way inside the block's own raw block.
 *   - Its last granule ends before the next block's data: for blocks A (user a, size s > 0)
 *     and B (user b > a), B's header lies in B's raw block, after A's raw block, so
 *     b >= a + s + 32. Let G be the start of A's last granule, G <= a + s - 1: then
 *     b >= G + 33, and b being a multiple of 32, b >= G + 64: B's first granule is past A's.
 *   So counters of distinct live blocks are distinct, also for accesses up to the usable size
 *   (A's raw block ends at or before b - 32, where B's first granule starts at the earliest).
 *   What can still land in a block's first or last granule: its own header (the shim is not
 *   instrumented), and writes of an instrumented allocator to its metadata next to the block.
 *   A 32-aligned block's granule i covers block bytes [64i - r, 64i - r + 64), r = user % 64.
 */
#ifndef HP_SHADOW_H
#define HP_SHADOW_H

#include <stddef.h>
#include <stdint.h>

#define HP_SHADOW_GRANULE 64u
#define HP_SHADOW_SCALE 3 /* granule (64 bytes) -> counter (8 bytes) */
#define HP_SHADOW_ADDR_BITS 47 /* x86_64 user space with 4-level page tables */
#define HP_SHADOW_PLANE_SIZE ((uint64_t)1 << (HP_SHADOW_ADDR_BITS - HP_SHADOW_SCALE)) /* 16 TiB */
/* Where plane 0 goes when that range is free: 16..32 TiB lies between a non-PIE program's
 * brk heap (low) and the mmap area (top-down from 0x7f..): nothing is mapped there unless a
 * program asks. A fixed place lets every copy of the runtime (instrument/) and the shim find
 * one shadow without looking symbols up; plane 1 follows at + 16 TiB. */
#define HP_SHADOW_FIXED_BASE ((uintptr_t)1 << 44)
/* Planes whose shadow spans at least this many bytes are cleared by giving their whole pages
 * back (madvise DONTNEED: one system call, no memory kept) instead of storing zeros: 64 KiB
 * of counters cover 512 KiB of heap. */
#define HP_SHADOW_RELEASE_MIN ((size_t)64 << 10)

/* Word plane (plane 2): one byte per 8 bytes, the accesses to the word, saturating. */
#define HP_WORD_BYTES 8u
#define HP_WORD_MAX 255u /* accesses a word counts up to (per block) */
/* In a plane-0 counter: its granule's words are counted in plane 2 (set by the shim only). */
#define HP_SHADOW_ARMED ((uint64_t)1 << 63)

/* The shadow a process uses: plane bases, 0 for a plane not reserved. Fixed once set. */
struct hp_shadow {
    uintptr_t base;  /* plane 0: every access */
    uintptr_t wbase; /* plane 1: writes only (callback builds) */
    uintptr_t hbase; /* plane 2: per-word counters of armed small blocks (callback builds) */
};

/* A block's figures from the shadow. */
struct hp_shadow_sum {
    uint64_t accesses; /* plane 0 summed over the block's granules */
    uint64_t writes;   /* plane 1 summed (0 without plane 1) */
    uint64_t granules; /* granules the block covers: utilisation's denominator */
    uint64_t touched;  /* granules with at least one access */
};

/* The counter of address a in the plane at base. */
static inline uint64_t *hp_shadow_ctr(uintptr_t base, uintptr_t a)
{
    return (uint64_t *)(base + ((a & ~(uintptr_t)(HP_SHADOW_GRANULE - 1)) >> HP_SHADOW_SCALE));
}

/* The word counter of address a in the plane at hbase. */
static inline uint8_t *hp_shadow_word(uintptr_t hbase, uintptr_t a)
{
    return (uint8_t *)(hbase + (a >> 3));
}

/* One access at a in plane 2, as the callbacks count it where a's granule is armed: up to
 * HP_WORD_MAX. */
static inline void hp_shadow_word_bump(uintptr_t hbase, uintptr_t a)
{
    uint8_t *w = hp_shadow_word(hbase, a);
    unsigned v = *w;
    if (v != HP_WORD_MAX)
        *w = (uint8_t)(v + 1);
}

/* Granules covered by [p, p + size): from p's granule to the granule of its last byte. */
static inline uint64_t hp_shadow_granules(uintptr_t p, size_t size)
{
    if (size == 0)
        return 0;
    return (((p + size - 1) >> 6) - (p >> 6)) + 1;
}

/* Utilisation in percent: granules touched of granules covered (0 for an empty block). */
static inline unsigned hp_shadow_util_pct(const struct hp_shadow_sum *s)
{
    return s->granules ? (unsigned)(s->touched * 100 / s->granules) : 0;
}

/* Reserve plane 0 (and plane 1 with HP_SHADOW_WRITES, plane 2 with HP_SHADOW_WORDS in
 * planes) in sh, those not reserved yet: at the fixed place when free, or adopting the shadow
 * another copy of this code (the shim, or the runtime of another module) reserved there, else
 * wherever the kernel puts it. One-time per plane and not thread-safe by itself: the caller
 * serialises. Returns 0, or a negative errno when a plane could not be reserved (sh then keeps
 * what it had). */
#define HP_SHADOW_WRITES 1
#define HP_SHADOW_WORDS 2
int hp_shadow_reserve(struct hp_shadow *sh, int planes);

/* At allocation: zero the counters of [p, p + size) in every plane (a reused address may hold
 * counts from a freed block's after-free accesses or from memory that was not a block). */
void hp_shadow_clear(const struct hp_shadow *sh, uintptr_t p, size_t size);
/* At free: the block's figures, its counters cleared (large blocks' shadow pages given back).
 * hist (may be NULL): hist[i] += count of the block's granule i, for i < hist_len (an atomic
 * addition once hp_shadow_hist_shared is set: threads add to one context's histogram). */
void hp_shadow_take(const struct hp_shadow *sh, uintptr_t p, size_t size,
                    struct hp_shadow_sum *out, uint64_t *hist, size_t hist_len);
/* hp_shadow_take into a histogram of the caller's own, which no other thread adds to: its
 * first hist_len bins are set to the block's counts (hist_len at least the block's granules). */
void hp_shadow_take_own(const struct hp_shadow *sh, uintptr_t p, size_t size,
                        struct hp_shadow_sum *out, uint64_t *hist, size_t hist_len);
/* Set once a second thread may exist (core/): from then on hist additions are atomic. */
extern int hp_shadow_hist_shared;
/* At a dump, for live blocks: the same figures, counters left as they are. */
void hp_shadow_peek(const struct hp_shadow *sh, uintptr_t p, size_t size,
                    struct hp_shadow_sum *out, uint64_t *hist, size_t hist_len);
/* Give back the whole shadow pages of [p, p + size) in every plane (their counters read 0
 * after): for memory that stops being heap without a free, and for large freed blocks. */
void hp_shadow_release(const struct hp_shadow *sh, uintptr_t p, size_t size);

/* ---- per-word histograms (words.c): plane 2, for blocks of up to hp_shadow_word_max bytes.
 * A block's words are [p, p + size) rounded up to whole words (p is 8-aligned: user pointers
 * are multiples of 32). Nothing happens while sh has no plane 2. ---- */
/* Blocks up to this many bytes are armed (0: none; the shim sets it at init from its option,
 * before any module attaches; plane 2 is reserved only when it is not 0). */
extern uint32_t hp_shadow_word_max;
/* Words of a block of size bytes: its histogram's bins. */
static inline uint64_t hp_shadow_words(size_t size) { return (size + HP_WORD_BYTES - 1) / HP_WORD_BYTES; }
/* At allocation of a small block, after hp_shadow_clear: its granules armed (plane 0), its
 * words at 0 accesses. */
void hp_shadow_word_arm(const struct hp_shadow *sh, uintptr_t p, size_t size);
/* At free, before hp_shadow_take (which clears the granules, their arming with them):
 * bins[i] += accesses of word i, sat[i] += 1 when word i saturated (its count is then a lower
 * bound), for i < len; the words back at 0. bins and sat may be NULL (only the clearing).
 * Atomic additions once hp_shadow_hist_shared is set, as hp_shadow_take's. */
void hp_shadow_word_take(const struct hp_shadow *sh, uintptr_t p, size_t size, uint64_t *bins,
                         uint64_t *sat, size_t len);
/* At a dump, for a live block: the same additions, words left as they are. */
void hp_shadow_word_peek(const struct hp_shadow *sh, uintptr_t p, size_t size, uint64_t *bins,
                         uint64_t *sat, size_t len);

/* ---- live blocks (live.c): while the shadow is on, the blocks the shim handed out and has
 * not taken back (user pointer, size, context), for a dump to fold their access counts in
 * (hp_shadow_peek). Safe in signal handlers. ---- */
/* Register a block; returns its reference for hp_shadow_live_del (kept in its header), 0 when
 * it could not be registered (no memory). user: a multiple of 32 below 2^47. */
uint32_t hp_shadow_live_add(uintptr_t user, uint64_t size, uint32_t ctx);
/* The block at user, registered as ref, goes (nothing for a ref of 0 or of another block). */
void hp_shadow_live_del(uint32_t ref, uintptr_t user);
/* fn for every live block, without locks: blocks made or freed meanwhile may be left out or
 * seen. fn must not allocate through the shim. */
void hp_shadow_live_foreach(void (*fn)(uintptr_t user, uint64_t size, uint32_t ctx, void *arg),
                            void *arg);
/* The calling thread ends: the free slots it keeps go back to the shared lists. */
void hp_shadow_live_thread_exit(void);
uint64_t hp_shadow_live_bytes(void);   /* memory of the registry: 16 bytes a slot ever used */
uint64_t hp_shadow_live_dropped(void); /* blocks that could not be registered */
void hp_shadow_live_fork_prepare(void);
void hp_shadow_live_fork_parent(void);
void hp_shadow_live_fork_child(void);

/* The process's shadow, owned by the shim (attach.c); zero until an instrumented module
 * attaches, so uninstrumented programs pay one load and branch on their allocation paths. */
extern struct hp_shadow hp_shadow;
static inline int hp_shadow_on(void) { return __atomic_load_n(&hp_shadow.base, __ATOMIC_ACQUIRE) != 0; }

/* ---- attaching (attach.c) ---- */
struct hp_attach;
/* What heapprof_shadow_attach does (attach.h): reserve the shadow on the first call, note the
 * module and its mode, answer the planes. -1: refused (hp_shadow_refuse, a bad struct). */
int hp_shadow_attach(struct hp_attach *a);
extern unsigned hp_shadow_modes; /* OR of the modes of every attach so far */
extern int hp_shadow_refuse;     /* set at init with access=0: every attach is refused */
/* The modules that attached: an address inside each and its mode bits. */
#define HP_SHADOW_MODULES_MAX 256
struct hp_shadow_module {
    uintptr_t addr;
    uint32_t mode;
};
unsigned hp_shadow_modules(struct hp_shadow_module *out, unsigned cap);

#endif
