/* The shim's allocation paths: every interposed entry point lands here. Each block gets a
 * 32-byte header (header_internal.h) in front of memory from the backend; frees find the underlying
 * block through it and hand anything that is not ours to the backend untouched. */
#include "core/core.h"
#include "core/core_internal.h"
#include "profile/profile.h"
#include "header_internal.h"
#include "backend/backend.h"
#include "bootstrap/bootstrap.h"
#include "shadow/shadow.h"
#include "rt/rt.h"

#include <errno.h>
#include <sched.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

uint64_t hp_secret;
struct hp_counters hp_counters;

/* What a plain block asks the backend for beyond the program's size. Backends hand out
 * 16-byte aligned blocks (the x86_64 ABI's minimum): one extra 16 bytes puts the user pointer
 * on a 32-byte boundary whatever the block's place. A program's own allocator may align less
 * (8 bytes, a toy bump allocator's): the first block that shows it raises this for good to
 * what any alignment needs. */
#define PLAIN_OVERHEAD (HP_HEADER_SIZE + 16u)
#define PLAIN_OVERHEAD_ANY (HP_HEADER_SIZE + 32u)
static size_t plain_overhead = PLAIN_OVERHEAD;

static int fault_check(void)
{
    static uint64_t n;
    if (HP_LIKELY(hp_opt.fault_after == 0))
        return 0;
    return __atomic_add_fetch(&n, 1, __ATOMIC_RELAXED) > hp_opt.fault_after;
}

/* ---------- page-start blocks ----------
 * A block whose user pointer starts a page has its header on the previous page. free() of an
 * arbitrary pointer at a page start must not read that page unless it is mapped, and asking the
 * kernel (mincore) is a system call costing microseconds in a virtual machine; one plain block
 * in 128 falls there (python3 made 45,000 such calls per run), and every block aligned to a
 * page does. So the shim remembers which page starts are live blocks of its own: one bit per
 * page, in 32 KiB bitmaps of 1 GiB of address space each, found through a table of 131,072
 * pointers (47-bit user addresses), all from the metadata arena and made on first use. A bit
 * is set when such a block is handed out and cleared before the block goes back to the
 * backend, so a set bit always means "our block: its header is mapped". A clear bit (a
 * foreign pointer, a double free, a block made when the metadata budget was spent) falls back
 * to mincore. */
#define PS_L2_PAGES_LOG 18 /* pages per bitmap: 1 GiB */
#define PS_L1_SIZE ((size_t)1 << (47 - 12 - PS_L2_PAGES_LOG))

static uint64_t **ps_l1;

static inline uint64_t *ps_bitmap(uintptr_t page) /* NULL if there is none yet */
{
    uint64_t **l1 = __atomic_load_n(&ps_l1, __ATOMIC_ACQUIRE);
    return l1 ? __atomic_load_n(&l1[page >> PS_L2_PAGES_LOG], __ATOMIC_ACQUIRE) : NULL;
}

/* Did we hand out user pointer `user` (a page start) and not take it back yet? */
static inline int ps_ours(uintptr_t user)
{
    uintptr_t page = user >> 12;
    if (page >> (47 - 12))
        return 0;
    uint64_t *bm = ps_bitmap(page);
    if (!bm)
        return 0;
    uintptr_t i = page & (((uintptr_t)1 << PS_L2_PAGES_LOG) - 1);
    return (__atomic_load_n(&bm[i / 64], __ATOMIC_RELAXED) >> (i % 64)) & 1;
}

/* Make (if need be) the table and bitmap for page; NULL when the metadata budget is spent. */
static uint64_t *ps_make(uintptr_t page)
{
    uint64_t **l1 = __atomic_load_n(&ps_l1, __ATOMIC_ACQUIRE);
    if (!l1) {
        uint64_t **fresh = hp_meta_map(PS_L1_SIZE * sizeof *fresh);
        if (!fresh)
            return NULL;
        uint64_t **none = NULL;
        /* A lost race leaves the loser's table unused: a 1 MiB mapping, at most once. */
        if (!__atomic_compare_exchange_n(&ps_l1, &none, fresh, 0, __ATOMIC_ACQ_REL,
                                         __ATOMIC_ACQUIRE))
            fresh = none;
        l1 = fresh;
    }
    uint64_t **slot = &l1[page >> PS_L2_PAGES_LOG];
    uint64_t *bm = __atomic_load_n(slot, __ATOMIC_ACQUIRE);
    if (!bm) {
        uint64_t *fresh = hp_meta_alloc(((size_t)1 << PS_L2_PAGES_LOG) / 8);
        if (!fresh)
            return NULL;
        uint64_t *none = NULL;
        bm = __atomic_compare_exchange_n(slot, &none, fresh, 0, __ATOMIC_ACQ_REL,
                                         __ATOMIC_ACQUIRE) ? fresh : none;
    }
    return bm;
}

/* Set (on = 1) or clear the bit of page-start user pointer `user`. */
static HP_COLD void ps_mark(uintptr_t user, int on)
{
    uintptr_t page = user >> 12;
    if (page >> (47 - 12))
        return;
    uint64_t *bm = on ? ps_make(page) : ps_bitmap(page);
    if (!bm)
        return;
    uintptr_t i = page & (((uintptr_t)1 << PS_L2_PAGES_LOG) - 1);
    uint64_t bit = (uint64_t)1 << (i % 64);
    if (on)
        __atomic_fetch_or(&bm[i / 64], bit, __ATOMIC_RELAXED);
    else
        __atomic_fetch_and(&bm[i / 64], ~bit, __ATOMIC_RELAXED);
}

static inline int page_start(const void *user) { return ((uintptr_t)user & 4095) == 0; }

/* Fill in the header of a new block and record it with the profiler. */
static inline __attribute__((always_inline)) void *finish(void *raw, void *user, uint64_t size,
                                                          int aligned)
{
    struct hp_header *h = hp_hdr(user);
    uint32_t off = (uint32_t)((uintptr_t)user - (uintptr_t)raw);
    uint32_t ctx = 0, ms = 0, cpu = 0, ref = 0;
    if (hp_profiling) {
        /* An allocation that succeeds leaves errno alone, as free does: what profiling may
         * do on the way (libunwind's reads of its pipe, its loading, a first look at the
         * memory map, a dump a signal asked for) must not show. */
        int saved = errno;
        ms = hp_now_ms();
        cpu = hp_cpu();
        /* The frame of the entry point this is inlined into: the stack walk starts there. */
        ctx = hp_profile_alloc_at(size, ms, cpu, (uintptr_t)__builtin_frame_address(0));
        /* Access profiling (only with the profiler on): one load and branch while no
         * instrumented module attached. */
        if (HP_UNLIKELY(hp_shadow_on()))
            ref = hp_access_alloc((uintptr_t)user, size, ctx);
        errno = saved;
    }
    h->size_cpu = size | ((uint64_t)(cpu & 0xffff) << 48);
    h->context_id = ctx;
    h->live_ref = ref;
    h->alloc_ms = ms;
    h->reserved = 0;
    h->from_memalign = (uint8_t)aligned;
    h->base_off = off;
    h->check = hp_header_check(user, off);
    __atomic_store_n(&h->state, HP_STATE_LIVE, __ATOMIC_RELEASE);
    if (HP_UNLIKELY(page_start(user)))
        ps_mark((uintptr_t)user, 1);
    return user;
}

/* Where the user pointer goes in a plain block from the backend: the first 32-byte boundary at
 * least a header in. */
static inline void *plain_user(void *raw)
{
    return (void *)(((uintptr_t)raw + HP_HEADER_SIZE + 31) & ~(uintptr_t)31);
}

/* A plain block of need bytes from the backend: through mallocx with the program's flags,
 * calloc when zeroed memory is wanted and there is one, else malloc. */
static inline __attribute__((always_inline)) void *plain_block(size_t need, int zero, int xflags)
{
    if (xflags)
        return hp_be.mallocx(need, xflags | (zero ? HP_MALLOCX_ZERO : 0));
    if (zero && hp_be.calloc)
        return hp_be.calloc(1, need);
    return hp_be.malloc(need);
}

/* The backend gave a plain block aligned to less than 16 bytes, too small for the padding that
 * takes: from now on every plain block is asked with room for any alignment, and this one is
 * asked again. */
static HP_COLD void *plain_again(void *raw, size_t size, int zero, int xflags)
{
    __atomic_store_n(&plain_overhead, PLAIN_OVERHEAD_ANY, __ATOMIC_RELAXED);
    hp_be.free(raw);
    return plain_block(size + PLAIN_OVERHEAD_ANY, zero, xflags);
}

static HP_COLD void *boot_alloc(size_t size, size_t align)
{
    hp_tls.boot_calls++;
    void *p = hp_boot_alloc(size, align);
    if (!p)
        errno = ENOMEM;
    return p;
}

/* The allocation path. xflags: jemalloc mallocx() flags with the alignment and zero bits
 * cleared (an arena, a thread cache), given to the backend's mallocx; 0 on every other path,
 * where the compiler drops that code.
 *
 * The program's own memory (zeroing for calloc, copying for realloc) goes through libc's
 * memset, memcpy and memmove, fast at any size and seen by sanitizer runtimes as the writes
 * they are; the shim's metadata never does (hp_memset, hp_memcpy). */
static inline __attribute__((always_inline)) void *alloc_impl(size_t size, size_t align, int zero,
                                                              int xflags)
{
    if (HP_UNLIKELY(!hp_ready()))
        return boot_alloc(size, align);
    if (HP_UNLIKELY(hp_passthrough)) {
        void *p;
        if (align > 16)
            p = hp_be.memalign ? hp_be.memalign(align, size) : NULL;
        else if (zero && hp_be.calloc)
            p = hp_be.calloc(1, size);
        else
            p = hp_be.malloc(size); /* zeroed below when the allocator has no calloc */
        if (p && zero && !hp_be.calloc)
            memset(p, 0, size);
        if (hp_headerless)
            hp_hl_alloc(p, size, (uintptr_t)__builtin_frame_address(0));
        return p;
    }
    if (HP_UNLIKELY(size > HP_MAX_REQUEST || fault_check())) {
        errno = ENOMEM;
        return NULL;
    }
    void *raw, *user;
    int aligned = align > HP_MIN_ALIGN;
    if (!aligned) {
        size_t need = size + __atomic_load_n(&plain_overhead, __ATOMIC_RELAXED);
        raw = plain_block(need, zero, xflags);
        if (HP_UNLIKELY(!raw))
            return NULL;
        if (HP_UNLIKELY(((uintptr_t)raw & 15) && need < size + PLAIN_OVERHEAD_ANY)) {
            raw = plain_again(raw, size, zero, xflags);
            if (!raw)
                return NULL;
        }
        user = plain_user(raw);
        if (zero && !xflags && !hp_be.calloc)
            memset(user, 0, size);
    } else {
        /* The header needs room below an aligned user pointer: take a block aligned to
         * `align` and place the user pointer one alignment unit in. */
        if (align > HP_MAX_ALIGN || size > HP_MAX_REQUEST - align) {
            errno = ENOMEM;
            return NULL;
        }
        if (xflags) {
            raw = hp_be.mallocx(size + align, xflags | __builtin_ctzll(align));
            if (HP_UNLIKELY(!raw))
                return NULL;
            user = (char *)raw + align;
        } else {
            raw = hp_be.memalign ? hp_be.memalign(align, size + align) : NULL;
            if (HP_LIKELY(raw && ((uintptr_t)raw & (align - 1)) == 0)) {
                user = (char *)raw + align;
            } else {
                /* No memalign, or one that failed or broke its promise (Debian's mimalloc 2.0
                 * returns some blocks aligned to less than asked): align within a plain block. */
                if (raw)
                    hp_be.free(raw);
                raw = hp_be.malloc(size + align + PLAIN_OVERHEAD);
                if (HP_UNLIKELY(!raw))
                    return NULL;
                user = (void *)(((uintptr_t)raw + HP_HEADER_SIZE + align - 1) & ~(uintptr_t)(align - 1));
            }
        }
        if (zero)
            memset(user, 0, size);
    }
    return finish(raw, user, size, aligned);
}

HP_HOT void *hp_alloc(size_t size, size_t align, int zero) { return alloc_impl(size, align, zero, 0); }

HP_HOT void *hp_calloc(size_t n, size_t size)
{
    size_t total;
    if (__builtin_mul_overflow(n, size, &total)) {
        errno = ENOMEM;
        return NULL;
    }
    return hp_alloc(total, 0, 1);
}

void *hp_alloc_x(size_t size, size_t align, int zero, int xflags)
{
    if (!hp_be.mallocx || hp_passthrough) /* before init the table is empty */
        xflags = 0;
    return alloc_impl(size, align, zero, xflags);
}

/* A block from a source of raw memory other than the backend's own functions (mimalloc's
 * heaps, mi.c), or from the backend's malloc when get is NULL: get(arg, n, zero) gives n bytes,
 * zeroed when zero. The user pointer goes where (user + offset) is a multiple of align (a power
 * of two; 0 or at most HP_MIN_ALIGN: anywhere a plain block's would), so offset must be a
 * multiple of HP_MIN_ALIGN (mi.c hands other offsets to the allocator itself). The raw block is
 * over-asked by what placing the user pointer at any residue takes: no alignment is asked of
 * get, and the block is given back by the backend's free like any other. */
void *hp_alloc_from(void *(*get)(void *, size_t, int), void *arg, size_t size, size_t align,
                    size_t offset, int zero)
{
    if (!hp_ready())
        return offset ? (errno = ENOMEM, NULL) : boot_alloc(size, align);
    int aligned = align > HP_MIN_ALIGN;
    size_t pad = aligned ? HP_HEADER_SIZE + align - 1 : HP_HEADER_SIZE + HP_MIN_ALIGN - 1;
    if (size > HP_MAX_REQUEST || align > HP_MAX_ALIGN || (offset & (HP_MIN_ALIGN - 1)) || fault_check()) {
        errno = ENOMEM;
        return NULL;
    }
    void *raw = get ? get(arg, size + pad, zero) : plain_block(size + pad, zero, 0);
    if (!raw)
        return NULL;
    uintptr_t user = (uintptr_t)raw + HP_HEADER_SIZE;
    if (aligned)
        user = ((user + offset + align - 1) & ~(uintptr_t)(align - 1)) - offset;
    else
        user = (user + HP_MIN_ALIGN - 1) & ~(uintptr_t)(HP_MIN_ALIGN - 1);
    if (zero && !get && !hp_be.calloc)
        memset((void *)user, 0, size);
    return finish(raw, (void *)user, size, aligned || offset);
}

/* Is the page below page start a (where its header would be) mapped? Asks the kernel. */
static HP_COLD int page_mapped(uintptr_t a)
{
    /* Under a seccomp filter mincore may be refused or fatal: a clear bit then means foreign,
     * as a refused mincore would have said. */
    if (__atomic_load_n(&hp_filtered, __ATOMIC_RELAXED))
        return 0;
    hp_count(&hp_counters.page_probes);
    unsigned char vec;
    int saved = errno;
    int r = mincore((void *)((a - HP_HEADER_SIZE) & ~(uintptr_t)4095), 1, &vec);
    errno = saved;
    return r == 0;
}

/* Is the header below p safe to read? Only a question when p (32-byte aligned here) starts a
 * page: yes for page-start blocks of ours, else ask the kernel. */
static inline int header_readable(const void *p)
{
    if (HP_LIKELY(!page_start(p)))
        return 1;
    return ps_ours((uintptr_t)p) || page_mapped((uintptr_t)p);
}

/* The header of p if p is a live or freed block of ours, else NULL. */
static HP_HOT struct hp_header *our_header(void *p)
{
    if ((uintptr_t)p & (HP_MIN_ALIGN - 1))
        return NULL;
    if (!header_readable(p))
        return NULL;
    struct hp_header *h = hp_hdr(p);
    if (h->check != hp_header_check(p, h->base_off))
        return NULL;
    return h;
}

/* mimalloc's own API is in use (mi.c): its blocks the shim did not make (mimalloc serves some
 * requests itself) may be freed through free(), which is no mistake there. */
int hp_foreign_expected;

static HP_COLD void bad_free(const char *what, void *p, uint64_t *counter)
{
    uint64_t n = __atomic_fetch_add(counter, 1, __ATOMIC_RELAXED);
    if (counter == &hp_counters.foreign_frees && __atomic_load_n(&hp_foreign_expected, __ATOMIC_RELAXED))
        return;
    if (n == 0 && hp_opt.report_bad_free)
        hp_warn("%s %p; passing it to the allocator (reported once)", what, p);
}

/* The free of block p (header h) with the profiler: with its access figures while the shadow
 * is on (taken now: the caller has not given the block back yet). Blocks without a context
 * leave their counters as they are: the next block at their address clears its own. */
static inline void record_free(void *p, const struct hp_header *h)
{
    if (!hp_profiling || !h->context_id)
        return;
    if (HP_UNLIKELY(hp_shadow_on()))
        hp_access_free((uintptr_t)p, h);
    else
        hp_profile_free(h->context_id, hp_hdr_size(h), h->alloc_ms, hp_hdr_cpu(h));
}

/* Give raw back to the backend: through dallocx when the caller named a thread cache. */
static inline void be_free(void *raw, int xflags)
{
    if (xflags)
        hp_be.dallocx(raw, xflags);
    else
        hp_be.free(raw);
}

/* The free path; xflags as for alloc_impl (dallocx's thread-cache bits), 0 elsewhere. With
 * only_own, a pointer the shim did not make is left alone and 0 returned (mi.c gives it to
 * mimalloc's own function); 1 otherwise. */
static inline __attribute__((always_inline)) int free_impl(void *p, int xflags, int only_own)
{
    if (!p || hp_boot_owns(p))
        return 1;
    if (HP_UNLIKELY(!hp_ready())) {
        /* Only bootstrap blocks can exist before init finishes... unless another thread
         * finished allocating from the backend meanwhile: that cannot happen before
         * hp_init_state is DONE, so anything else is foreign. */
        return 1;
    }
    int saved = errno;
    if (HP_UNLIKELY(hp_passthrough)) {
        if (only_own)
            return 0;
        if (hp_headerless)
            hp_hl_free(p);
        be_free(p, xflags);
        errno = saved;
        return 1;
    }
    struct hp_header *h = our_header(p);
    if (HP_UNLIKELY(!h)) {
        if (only_own)
            return 0;
        bad_free("free of a pointer the shim did not allocate:", p, &hp_counters.foreign_frees);
        be_free(p, xflags);
        errno = saved;
        return 1;
    }
    /* A load and a store, not a compare-and-swap (a locked instruction on every free): two
     * threads freeing one block at the same moment both get past it, and the backend sees the
     * double free as it would without the shim (with the swap, the loser handed the block to
     * the backend a second time all the same). */
    if (HP_UNLIKELY(__atomic_load_n(&h->state, __ATOMIC_RELAXED) != HP_STATE_LIVE)) {
        bad_free("double free of", p, &hp_counters.double_frees);
        be_free(hp_hdr_raw(p, h), xflags); /* let the allocator's own checks speak */
        errno = saved;
        return 1;
    }
    __atomic_store_n(&h->state, HP_STATE_FREED, __ATOMIC_RELAXED);
    record_free(p, h);
    if (HP_UNLIKELY(page_start(p)))
        ps_mark((uintptr_t)p, 0); /* before the backend may hand the address out again */
    be_free(hp_hdr_raw(p, h), xflags);
    errno = saved;
    return 1;
}

HP_HOT void hp_free(void *p) { free_impl(p, 0, 0); }

int hp_free_own(void *p) { return free_impl(p, 0, 1); }

void hp_free_x(void *p, int xflags)
{
    if (!hp_be.dallocx || hp_passthrough)
        xflags = 0;
    free_impl(p, xflags, 0);
}

/* The usable size of our block p with header h. */
static size_t block_usable(void *p, const struct hp_header *h)
{
    if (!hp_be.usable_size)
        return hp_hdr_size(h);
    uintptr_t off = h->base_off;
    size_t real = hp_be.usable_size(hp_hdr_raw(p, h));
    return real > off ? real - off : 0;
}

int hp_owns(void *p)
{
    if (!p)
        return 0;
    if (hp_boot_owns(p))
        return 1;
    return hp_ready() && !hp_passthrough && our_header(p) != NULL;
}

/* The user pointer of the live block of the shim's made from the allocator's block at raw
 * (size bytes); NULL if raw holds none. The user pointer may be at any multiple of 32 in it (an
 * alignment at an offset): each is tried, first to last; a block of ours is found at the first
 * try unless it was aligned. Only a live header counts: the bytes of an earlier block at the
 * same address (freed, or let go by mi_heap_destroy) may still hold its header, with the same
 * raw, in front of where an aligned block now has its own. */
void *hp_block_in(void *raw, size_t size)
{
    if (!raw || !hp_ready() || hp_passthrough)
        return NULL;
    uintptr_t r = (uintptr_t)raw, end = r + size;
    uintptr_t u = (r + HP_HEADER_SIZE + HP_MIN_ALIGN - 1) & ~(uintptr_t)(HP_MIN_ALIGN - 1);
    for (; u <= end && u - r <= HP_MAX_ALIGN + HP_HEADER_SIZE + HP_MIN_ALIGN; u += HP_MIN_ALIGN) {
        /* (the header's bytes are inside the block: readable without asking, page start or not) */
        struct hp_header *h = hp_hdr((void *)u);
        if (h->check == hp_header_check((void *)u, h->base_off) && hp_hdr_raw((void *)u, h) == raw &&
            __atomic_load_n(&h->state, __ATOMIC_RELAXED) == HP_STATE_LIVE)
            return (void *)u;
    }
    return NULL;
}

/* The allocator gave back the block at raw (size bytes) without a free through the shim
 * (mimalloc's mi_heap_destroy frees a heap's blocks wholesale): if it holds a live block of
 * ours, that block's free is recorded now. */
void hp_forget_block(void *raw, size_t size)
{
    void *u = hp_block_in(raw, size);
    if (!u)
        return;
    struct hp_header *h = hp_hdr(u);
    __atomic_store_n(&h->state, HP_STATE_FREED, __ATOMIC_RELAXED);
    record_free(u, h);
    if (page_start(u))
        ps_mark((uintptr_t)u, 0);
}

size_t hp_usable_size(void *p)
{
    if (!p)
        return 0;
    if (hp_boot_owns(p))
        return hp_boot_size(p);
    if (!hp_ready())
        return 0;
    if (hp_passthrough)
        return hp_be.usable_size ? hp_be.usable_size(p) : 0;
    struct hp_header *h = our_header(p);
    if (!h)
        return hp_be.usable_size ? hp_be.usable_size(p) : 0;
    return block_usable(p, h);
}

/* Does a block at raw, asked with `asked` bytes, hold a header and size bytes at plain_user(raw)?
 * By its usable size where the backend tells it. */
static HP_COLD int fits_under_aligned(void *raw, size_t asked, size_t size)
{
    size_t room = hp_be.usable_size ? hp_be.usable_size(raw) : asked;
    if (room < asked)
        room = asked;
    return (uintptr_t)plain_user(raw) - (uintptr_t)raw + size <= room;
}

/* realloc by allocate-copy-free: for bootstrap blocks, aligned blocks and backends without
 * realloc. old_size is what the old block holds: its usable size, since programs may fill a
 * block up to what malloc_usable_size reports and glibc's realloc keeps all of it. */
static void *move_block(void *p, size_t old_size, size_t size)
{
    void *n = hp_alloc(size, 0, 0);
    if (!n)
        return NULL;
    memcpy(n, p, old_size < size ? old_size : size);
    hp_free(p);
    return n;
}

/* realloc of p that is not a live block of ours (h: its header, if it is a freed one): the
 * allocator's realloc has its say. */
static HP_COLD void *realloc_not_live(void *p, struct hp_header *h, size_t size)
{
    if (!h) {
        bad_free("realloc of a pointer the shim did not allocate:", p, &hp_counters.foreign_frees);
        return hp_be.realloc ? hp_be.realloc(p, size) : NULL;
    }
    /* A freed block: let the allocator's own checks see the block it knows. */
    bad_free("realloc of freed block", p, &hp_counters.double_frees);
    return hp_be.realloc ? hp_be.realloc(hp_hdr_raw(p, h), size) : NULL;
}

/* The backend's realloc gave nraw, aligned to less than 16 bytes (see plain_again), for size
 * bytes with `overhead` in front: the data (at old_off, keep bytes) goes to a block with room
 * for the padding this alignment needs. Returns the block to place the data in; NULL when,
 * out of memory right here, the data went across to a block of the shim's own (*moved, NULL
 * if even that failed) and nraw back to the backend. */
static HP_COLD void *realloc_realign(void *nraw, size_t size, size_t overhead, uintptr_t old_off,
                                     size_t keep, void **moved)
{
    __atomic_store_n(&plain_overhead, PLAIN_OVERHEAD_ANY, __ATOMIC_RELAXED);
    void *again = hp_be.realloc(nraw, size + PLAIN_OVERHEAD_ANY);
    if (again)
        return again;
    /* The under-aligned block itself has room for the header and the data at an aligned
     * place (plain_user) half of the time; no memory needed. */
    if (fits_under_aligned(nraw, size + overhead, size))
        return nraw;
    void *n = hp_alloc(size, 0, 0);
    if (n)
        memcpy(n, (char *)nraw + old_off, keep);
    hp_be.free(nraw);
    *moved = n;
    return NULL;
}

/* realloc's old block freed in the profile, with the access figures taken before the
 * backend's realloc (acc; NULL while the shadow is off). */
static void realloc_old_freed(const struct hp_header *old, const struct hp_access *acc)
{
    if (!hp_profiling || !old->context_id)
        return;
    if (acc)
        hp_profile_free_access(old->context_id, hp_hdr_size(old), old->alloc_ms, hp_hdr_cpu(old), acc);
    else
        hp_profile_free(old->context_id, hp_hdr_size(old), old->alloc_ms, hp_hdr_cpu(old));
}

HP_HOT void *hp_realloc(void *p, size_t size)
{
    if (!p)
        return hp_alloc(size, 0, 0);
    if (hp_boot_owns(p)) {
        if (size == 0 && hp_ready() && hp_realloc_zero_frees)
            return NULL;
        return move_block(p, hp_boot_size(p), size);
    }
    if (!hp_ready())
        return NULL; /* unreachable: only bootstrap blocks exist before init */
    if (hp_passthrough) {
        if (hp_headerless)
            return hp_hl_realloc(p, size, (uintptr_t)__builtin_frame_address(0));
        return hp_be.realloc ? hp_be.realloc(p, size) : NULL;
    }
    struct hp_header *h = our_header(p);
    if (!h || h->state != HP_STATE_LIVE)
        return realloc_not_live(p, h, size);
    if (size == 0 && hp_realloc_zero_frees) {
        hp_free(p);
        return NULL;
    }
    uint64_t old_size = hp_hdr_size(h);
    if (h->from_memalign || !hp_be.realloc || size > HP_MAX_REQUEST)
        return size > HP_MAX_REQUEST ? (errno = ENOMEM, NULL) : move_block(p, block_usable(p, h), size);
    if (fault_check()) {
        errno = ENOMEM;
        return NULL;
    }
    struct hp_header old = *h;
    void *raw = hp_hdr_raw(p, h);
    uintptr_t old_off = old.base_off;
    /* What the block may hold: up to its usable size (see move_block), which the shift below
     * must keep when the backend moves the block to an address of the other residue. */
    size_t keep = block_usable(p, h);
    if (keep > size)
        keep = size;
    /* Mark the old block freed first: if the block moves, a later free of the old pointer is
     * then seen as the double free it is. */
    uint8_t st = HP_STATE_LIVE;
    if (!__atomic_compare_exchange_n(&h->state, &st, HP_STATE_FREED, 0, __ATOMIC_ACQ_REL,
                                     __ATOMIC_RELAXED)) {
        bad_free("realloc of freed block", p, &hp_counters.double_frees);
        return hp_be.realloc(raw, size);
    }
    if (HP_UNLIKELY(page_start(p)))
        ps_mark((uintptr_t)p, 0);
    /* The old block's accesses, before the backend's realloc may give its range to another. */
    struct hp_access acc, *accp = NULL;
    if (HP_UNLIKELY(hp_shadow_on()))
        hp_access_take((uintptr_t)p, &old, accp = &acc);
    size_t overhead = __atomic_load_n(&plain_overhead, __ATOMIC_RELAXED);
    void *nraw = hp_be.realloc(raw, size + overhead);
    if (!nraw) {
        __atomic_store_n(&h->state, HP_STATE_LIVE, __ATOMIC_RELEASE);
        if (page_start(p))
            ps_mark((uintptr_t)p, 1);
        if (accp) /* live again, its accesses so far lost */
            h->live_ref = hp_access_alloc((uintptr_t)p, old_size, old.context_id);
        return NULL; /* the old block is untouched */
    }
    if (HP_UNLIKELY(((uintptr_t)nraw & 15) && overhead < PLAIN_OVERHEAD_ANY)) {
        void *moved = NULL;
        nraw = realloc_realign(nraw, size, overhead, old_off, keep, &moved);
        if (!nraw) {
            realloc_old_freed(&old, accp);
            /* NULL: no memory at all and no room in the block the data is in, so the data is
             * lost (the old pointer is gone; realloc cannot answer NULL). */
            return moved;
        }
    }
    void *user = plain_user(nraw);
    if ((uintptr_t)user - (uintptr_t)nraw != old_off)
        memmove(user, (char *)nraw + old_off, keep);
    realloc_old_freed(&old, accp);
    return finish(nraw, user, size, 0);
}

void *hp_reallocarray(void *p, size_t n, size_t size)
{
    size_t total;
    if (__builtin_mul_overflow(n, size, &total)) {
        errno = ENOMEM;
        return NULL;
    }
    return hp_realloc(p, total);
}
