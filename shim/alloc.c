/* The shim's allocation paths: every interposed entry point lands here. Each block gets a
 * 32-byte header (header.h) in front of memory from the backend; frees find the underlying
 * block through it and hand anything that is not ours to the backend untouched. */
#include "hp.h"
#include "header.h"
#include "backend.h"
#include "bootstrap.h"
#include "options.h"

#include <errno.h>
#include <sched.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

uint64_t hp_secret;
struct hp_counters hp_counters;

/* The backend hands out 16-byte aligned blocks (x86_64 ABI minimum); one extra 16 bytes lets
 * us put the user pointer on a 32-byte boundary whatever the block's alignment. */
#define PLAIN_OVERHEAD (HP_HEADER_SIZE + 16u)

static uint64_t clock_start_ns, start_unix_ns;

int hp_rseq_ok;
ptrdiff_t hp_rseq_cpu_off;

#if defined(__x86_64__)
/* glibc 2.35+ registers an rseq area for every thread and says where (sys/rseq.h); weak, so
 * an older glibc leaves them NULL. */
extern const ptrdiff_t __rseq_offset __attribute__((weak));
extern const unsigned int __rseq_size __attribute__((weak));
#endif

void hp_clock_init(void)
{
#if defined(__x86_64__)
    /* cpu_id is the second 32-bit field of struct rseq. */
    if (&__rseq_offset && &__rseq_size && __rseq_size >= 8) {
        hp_rseq_cpu_off = __rseq_offset + 4;
        hp_rseq_ok = 1;
    }
#endif
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC_COARSE, &ts);
    clock_start_ns = (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
    clock_gettime(CLOCK_REALTIME, &ts);
    start_unix_ns = (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

uint64_t hp_start_unix_ns(void) { return start_unix_ns; }

uint32_t hp_now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC_COARSE, &ts);
    uint64_t ns = (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
    return (uint32_t)((ns - clock_start_ns) / 1000000u);
}

uint32_t hp_cpu_slow(void)
{
    /* glibc 2.35+ answers from the rseq area: no system call. */
    int c = sched_getcpu();
    return c < 0 ? 0 : (uint32_t)c;
}

static int fault_check(void)
{
    static uint64_t n;
    if (HP_LIKELY(hp_opt.fault_after == 0))
        return 0;
    return __atomic_add_fetch(&n, 1, __ATOMIC_RELAXED) > hp_opt.fault_after;
}

/* Fill in the header of a new block and record it with the profiler. */
static inline __attribute__((always_inline)) void *finish(void *raw, void *user, uint64_t size,
                                                          int aligned)
{
    struct hp_header *h = hp_hdr(user);
    uint32_t off16 = (uint32_t)(((uintptr_t)user - (uintptr_t)raw) / 16);
    uint32_t ctx = 0, ms = 0, cpu = 0;
    if (hp_profiling) {
        ms = hp_now_ms();
        cpu = hp_cpu();
        /* The frame of the entry point this is inlined into: the stack walk starts there. */
        ctx = hp_profile_alloc_at(size, ms, cpu, (uintptr_t)__builtin_frame_address(0));
    }
    h->size_cpu = size | ((uint64_t)(cpu & 0xffff) << 48);
    h->context_id = ctx;
    h->type_id = 0;
    h->alloc_ms = ms;
    h->reserved = 0;
    h->from_memalign = (uint8_t)aligned;
    h->base_off16 = off16;
    h->check = hp_header_check(user, off16);
    __atomic_store_n(&h->state, HP_STATE_LIVE, __ATOMIC_RELEASE);
    return user;
}

/* Where the user pointer goes in a plain block from the backend: the first 32-byte boundary at
 * least a header in. */
static inline void *plain_user(void *raw)
{
    return (void *)(((uintptr_t)raw + HP_HEADER_SIZE + 31) & ~(uintptr_t)31);
}

static inline int page_start(const void *user) { return ((uintptr_t)user & 4095) == 0; }

/* A user pointer on a page boundary has its header on the previous page, and free() must then
 * ask the kernel (mincore) whether that page is mapped before reading it: a system call for
 * one block in 128. Plain blocks avoid the boundary: the block is taken again 32 bytes larger
 * and the user pointer moves one 32-byte step further in. Best effort: if that fails the
 * first block is kept, and free() still handles it. */
static __attribute__((noinline)) void *off_page_start(void **rawp, size_t need, int zero)
{
    void *raw2 = zero && hp_be.calloc ? hp_be.calloc(1, need + 32) : hp_be.malloc(need + 32);
    if (!raw2)
        return plain_user(*rawp);
    hp_be.free(*rawp);
    *rawp = raw2;
    void *user = plain_user(raw2);
    if (page_start(user))
        user = (char *)user + 32;
    return user;
}

static void *boot_alloc(size_t size, size_t align)
{
    hp_tls.boot_calls++;
    void *p = hp_boot_alloc(size, align);
    if (!p)
        errno = ENOMEM;
    return p;
}

void *hp_alloc(size_t size, size_t align, int zero)
{
    if (HP_UNLIKELY(!hp_ready()))
        return boot_alloc(size, align);
    if (HP_UNLIKELY(hp_passthrough)) {
        void *p;
        if (align > 16)
            p = hp_be.memalign ? hp_be.memalign(align, size) : NULL;
        else
            p = zero ? (hp_be.calloc ? hp_be.calloc(1, size) : NULL) : hp_be.malloc(size);
        if (p && zero && !hp_be.calloc)
            memset(p, 0, size);
        return p;
    }
    if (HP_UNLIKELY(size > HP_MAX_REQUEST || fault_check())) {
        errno = ENOMEM;
        return NULL;
    }
    void *raw, *user;
    int aligned = align > HP_MIN_ALIGN;
    if (!aligned) {
        size_t need = size + PLAIN_OVERHEAD;
        if (zero && hp_be.calloc)
            raw = hp_be.calloc(1, need);
        else
            raw = hp_be.malloc(need);
        if (HP_UNLIKELY(!raw))
            return NULL;
        user = plain_user(raw);
        if (HP_UNLIKELY(page_start(user)))
            user = off_page_start(&raw, need, zero);
        if (zero && !hp_be.calloc)
            memset(user, 0, size);
    } else {
        /* The header needs room below an aligned user pointer: take a block aligned to
         * `align` and place the user pointer one alignment unit in. */
        if (align > ((uint64_t)1 << 35) || size > HP_MAX_REQUEST - align) {
            errno = ENOMEM;
            return NULL;
        }
        if (hp_be.memalign) {
            raw = hp_be.memalign(align, size + align);
            if (HP_UNLIKELY(!raw))
                return NULL;
            user = (char *)raw + align;
        } else {
            raw = hp_be.malloc(size + align + PLAIN_OVERHEAD);
            if (HP_UNLIKELY(!raw))
                return NULL;
            user = (void *)(((uintptr_t)raw + HP_HEADER_SIZE + align - 1) & ~(uintptr_t)(align - 1));
        }
        if (zero)
            memset(user, 0, size);
    }
    return finish(raw, user, size, aligned);
}

/* Is the word just below p safe to read? Only a question when the header would start on the
 * previous page. */
static int header_readable(const void *p)
{
    uintptr_t a = (uintptr_t)p;
    if ((a & 4095) >= HP_HEADER_SIZE)
        return 1;
    unsigned char vec;
    int saved = errno;
    int r = mincore((void *)((a - HP_HEADER_SIZE) & ~(uintptr_t)4095), 1, &vec);
    errno = saved;
    return r == 0;
}

/* The header of p if p is a live or freed block of ours, else NULL. */
static struct hp_header *our_header(void *p)
{
    if ((uintptr_t)p & (HP_MIN_ALIGN - 1))
        return NULL;
    if (!header_readable(p))
        return NULL;
    struct hp_header *h = hp_hdr(p);
    if (h->check != hp_header_check(p, h->base_off16))
        return NULL;
    return h;
}

static void bad_free(const char *what, void *p, uint64_t *counter)
{
    uint64_t n = __atomic_fetch_add(counter, 1, __ATOMIC_RELAXED);
    if (n == 0 && hp_opt.report_bad_free)
        hp_warn("%s %p; passing it to the allocator (reported once)", what, p);
}

void hp_free(void *p)
{
    if (!p || hp_boot_owns(p))
        return;
    if (HP_UNLIKELY(!hp_ready())) {
        /* Only bootstrap blocks can exist before init finishes... unless another thread
         * finished allocating from the backend meanwhile: that cannot happen before
         * hp_init_state is DONE, so anything else is foreign. */
        return;
    }
    int saved = errno;
    if (HP_UNLIKELY(hp_passthrough)) {
        hp_be.free(p);
        errno = saved;
        return;
    }
    struct hp_header *h = our_header(p);
    if (HP_UNLIKELY(!h)) {
        bad_free("free of a pointer the shim did not allocate:", p, &hp_counters.foreign_frees);
        hp_be.free(p);
        errno = saved;
        return;
    }
    uint8_t st = HP_STATE_LIVE;
    if (HP_UNLIKELY(!__atomic_compare_exchange_n(&h->state, &st, HP_STATE_FREED, 0,
                                                 __ATOMIC_ACQ_REL, __ATOMIC_RELAXED))) {
        bad_free("double free of", p, &hp_counters.double_frees);
        hp_be.free(hp_hdr_raw(p, h)); /* let the allocator's own checks speak */
        errno = saved;
        return;
    }
    if (hp_profiling && h->context_id)
        hp_profile_free(h->context_id, hp_hdr_size(h), h->alloc_ms, hp_hdr_cpu(h));
    hp_be.free(hp_hdr_raw(p, h));
    errno = saved;
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
    if (!hp_be.usable_size)
        return hp_hdr_size(h);
    uintptr_t off = (uintptr_t)h->base_off16 * 16;
    size_t real = hp_be.usable_size(hp_hdr_raw(p, h));
    return real > off ? real - off : 0;
}

/* realloc by allocate-copy-free: for bootstrap blocks, aligned blocks and backends without
 * realloc. old_size is what the old block holds. */
static void *move_block(void *p, size_t old_size, size_t size)
{
    void *n = hp_alloc(size, 0, 0);
    if (!n)
        return NULL;
    memcpy(n, p, old_size < size ? old_size : size);
    hp_free(p);
    return n;
}

void *hp_realloc(void *p, size_t size)
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
    if (hp_passthrough)
        return hp_be.realloc ? hp_be.realloc(p, size) : NULL;
    struct hp_header *h = our_header(p);
    if (!h || h->state != HP_STATE_LIVE) {
        if (!h) {
            bad_free("realloc of a pointer the shim did not allocate:", p, &hp_counters.foreign_frees);
            return hp_be.realloc ? hp_be.realloc(p, size) : NULL;
        }
        /* A freed block: let the allocator's own checks see the block it knows. */
        bad_free("realloc of freed block", p, &hp_counters.double_frees);
        return hp_be.realloc ? hp_be.realloc(hp_hdr_raw(p, h), size) : NULL;
    }
    if (size == 0 && hp_realloc_zero_frees) {
        hp_free(p);
        return NULL;
    }
    uint64_t old_size = hp_hdr_size(h);
    if (h->from_memalign || !hp_be.realloc || size > HP_MAX_REQUEST)
        return size > HP_MAX_REQUEST ? (errno = ENOMEM, NULL) : move_block(p, old_size, size);
    if (fault_check()) {
        errno = ENOMEM;
        return NULL;
    }
    struct hp_header old = *h;
    void *raw = hp_hdr_raw(p, h);
    uintptr_t old_off = (uintptr_t)old.base_off16 * 16;
    /* Mark the old block freed first: if the block moves, a later free of the old pointer is
     * then seen as the double free it is. */
    uint8_t st = HP_STATE_LIVE;
    if (!__atomic_compare_exchange_n(&h->state, &st, HP_STATE_FREED, 0, __ATOMIC_ACQ_REL,
                                     __ATOMIC_RELAXED)) {
        bad_free("realloc of freed block", p, &hp_counters.double_frees);
        return hp_be.realloc(raw, size);
    }
    /* The old user data starts old_off bytes in: 32 or 48, or 32 more for a block kept off a
     * page start (see off_page_start); the new block must hold it at the same offset. */
    size_t need = size + PLAIN_OVERHEAD + (old_off > PLAIN_OVERHEAD ? 32 : 0);
    void *nraw = hp_be.realloc(raw, need);
    if (!nraw) {
        __atomic_store_n(&h->state, HP_STATE_LIVE, __ATOMIC_RELEASE);
        return NULL; /* the old block is untouched */
    }
    void *user = plain_user(nraw);
    if (HP_UNLIKELY(page_start(user))) {
        /* Off the page start as in hp_alloc, with 32 more bytes (the contents stay where
         * they are relative to nraw, grown in place or moved). */
        if (need == size + PLAIN_OVERHEAD) {
            void *bigger = hp_be.realloc(nraw, need + 32);
            if (bigger) {
                nraw = bigger;
                need += 32;
                user = plain_user(nraw);
            }
        }
        if (page_start(user) && need > size + PLAIN_OVERHEAD)
            user = (char *)user + 32;
    }
    if ((uintptr_t)user - (uintptr_t)nraw != old_off)
        memmove(user, (char *)nraw + old_off, old_size < size ? old_size : size);
    if (hp_profiling && old.context_id)
        hp_profile_free(old.context_id, old_size, old.alloc_ms, hp_hdr_cpu(&old));
    return finish(nraw, user, size, 0);
}
