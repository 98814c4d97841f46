/* The registry of live blocks while the shadow is on: user pointer, size and context of each
 * block the shim handed out and has not taken back, so that a dump can fold the access counts
 * of blocks still live into their contexts (hp_shadow_peek), as the exit rule folds live blocks
 * into HIBs. Nothing is kept while the shadow is off. */
#include "shadow/shadow.h"
#include "shadow/shadow_internal.h"
#include "rt/rt.h"

/* One array of 16-byte slots, reserved at the first block (address space only: pages are
 * touched as slots are first used), and a block's slot number kept in its header by core/, so
 * that adding and removing are a few stores and a free-list step: no hashing, no search. Free
 * slots are chained through their second word, in batches of up to MAG_MOVE. Each thread keeps
 * two batches (magazines, as in Bonwick's slab allocator): it takes from and gives back to the
 * current one without a lock or an atomic instruction; when the current one is empty, the
 * other becomes current or a batch comes from a list; when it is full, the other (full too, or
 * empty) goes to a list and the full one takes its place. So a batch moves between a thread
 * and 64 shared lists whole, in a few stores under one lock each (one list chosen by the
 * thread's address, so threads seldom meet on a lock), never link by link, and a slot freed is
 * the next one taken, still in the cache. A thread that finds its list empty takes from
 * another before it takes fresh slots, so a thread freeing what another allocates does not
 * grow the array. A hash table of the pointers (the first version) took 18% of
 * bench/alloc_bench's time built with heapprof-cc: a lock, a hash and a probe of a table larger
 * than the caches on every allocation and free; the shared lists alone, locked at every
 * allocation and free, cost 82 instructions a pair, the magazines 67 and no locked instruction
 * (callgrind, alloc_bench built with heapprof-cc). With one chain of up to 64 slots of which 32
 * moved at a time, each move followed 32 links: Lua's collector frees and allocates in runs,
 * and moved 32 slots every 32 blocks, 26 instructions an allocation (callgrind, Lua built
 * with heapprof-cc, bench/access_alloc.sh). */
#define SLOTS_MAX ((uint32_t)1 << 28) /* 4 GiB of address space */
#define LISTS_LOG 6
#define LISTS (1u << LISTS_LOG)
#define MAG_MOVE 32 /* the most slots of a batch: a thread keeps two */

/* A slot: the user pointer's bits 5..46 (a user pointer is a multiple of 32 below 2^47; 0: the
 * slot is free), the size (below 2^54) and the context packed in two words. A free slot's second
 * word is the next free slot of its batch, plus one; the first slot of a batch on a list also
 * holds the list's next batch (its first slot plus one) in the second word's high half, and its
 * batch's length in the first word's high bits (its key stays 0: free). */
struct slot {
    uint64_t w0; /* user >> 5 | (size & (2^22 - 1)) << 42 */
    uint64_t w1; /* ctx | (size >> 22) << 32 */
};
#define KEY_BITS 42
#define KEY_MASK ((UINT64_C(1) << KEY_BITS) - 1)
#define SIZE_LO_BITS (64 - KEY_BITS)

struct list {
    hp_lock_t lock;
    uint32_t head; /* first slot of its first batch + 1; 0: none */
} __attribute__((aligned(HP_CACHELINE)));

static struct slot *slots;
static uint32_t used;    /* slots [0, used) have been handed out at least once */
static uint64_t dropped; /* registrations refused: the array is full, or could not be mapped */
static uint32_t listed;  /* slots on the shared lists */
static struct list lists[LISTS];

/* The thread's state, in one variable: each thread-local variable of the injected library is
 * reached through an offset loaded from the GOT, one load per variable a function uses. busy:
 * the thread is in the middle of an operation (a signal handler that interrupts it must not
 * take the lock it may hold); head, n: the current batch's first slot + 1 (0: empty) and its
 * length; prev_head, prev_n: the other batch's. */
static __thread struct {
    int busy;
    uint32_t head, n;
    uint32_t prev_head, prev_n;
} mine;

static inline uint64_t slot_key(const struct slot *s) { return __atomic_load_n(&s->w0, __ATOMIC_ACQUIRE) & KEY_MASK; }

static struct slot *slot_array(void)
{
    struct slot *s = __atomic_load_n(&slots, __ATOMIC_ACQUIRE);
    if (HP_LIKELY(s != NULL))
        return s;
    /* No lock: a signal handler may come here while its thread is here too. */
    long m = sys_mmap(0, (size_t)SLOTS_MAX * sizeof(struct slot), 0);
    if (m < 0 && m > -4096)
        return NULL;
    sys_madvise((uintptr_t)m, (size_t)SLOTS_MAX * sizeof(struct slot), MADV_DONTDUMP);
    struct slot *none = NULL;
    if (!__atomic_compare_exchange_n(&slots, &none, (struct slot *)m, 0, __ATOMIC_ACQ_REL,
                                     __ATOMIC_ACQUIRE)) {
        sys_munmap((uintptr_t)m, (size_t)SLOTS_MAX * sizeof(struct slot));
        return none;
    }
    return (struct slot *)m;
}

/* The list of the calling thread. */
static inline struct list *my_list(void)
{
    uintptr_t a = (uintptr_t)&mine;
    return &lists[(a >> 12 ^ a >> 20) & (LISTS - 1)];
}

/* A fresh slot nobody will ever give back to a list (a signal handler's; full lists). */
static uint32_t take_fresh(uint32_t n)
{
    uint32_t first = __atomic_fetch_add(&used, n, __ATOMIC_RELAXED);
    if (first >= SLOTS_MAX || SLOTS_MAX - first < n) {
        __atomic_fetch_add(&dropped, 1, __ATOMIC_RELAXED);
        return UINT32_MAX;
    }
    return first;
}

static void fill(struct slot *sl, uintptr_t user, uint64_t size, uint32_t ctx)
{
    __atomic_store_n(&sl->w1, ctx | (size >> SIZE_LO_BITS) << 32, __ATOMIC_RELAXED);
    /* The key last: a dump that sees it sees the rest. */
    __atomic_store_n(&sl->w0, (user >> 5) | size << KEY_BITS, __ATOMIC_RELEASE);
}

/* The first batch of list l becomes the thread's current one (which is empty); its length. */
static uint32_t take_from(struct list *l, struct slot *s)
{
    hp_lock(&l->lock);
    uint32_t head = l->head, n = 0;
    if (head) {
        struct slot *f = &s[head - 1];
        __atomic_store_n(&l->head, (uint32_t)(f->w1 >> 32), __ATOMIC_RELAXED);
        n = (uint32_t)(__atomic_load_n(&f->w0, __ATOMIC_RELAXED) >> KEY_BITS);
        f->w1 = (uint32_t)f->w1;
        __atomic_store_n(&f->w0, 0, __ATOMIC_RELAXED);
        mine.head = head;
        mine.n = n;
    }
    hp_unlock(&l->lock);
    if (n)
        __atomic_fetch_sub(&listed, n, __ATOMIC_RELAXED);
    return n;
}

/* The batch at head, n slots long, onto the thread's list. */
static HP_COLD void give_batch(struct slot *s, uint32_t head, uint32_t n)
{
    if (!n)
        return;
    struct slot *f = &s[head - 1];
    struct list *l = my_list();
    /* Its length in the key's spare bits, the key staying 0: a dump passes it by. */
    __atomic_store_n(&f->w0, (uint64_t)n << KEY_BITS, __ATOMIC_RELAXED);
    hp_lock(&l->lock);
    f->w1 = (uint32_t)f->w1 | (uint64_t)l->head << 32;
    __atomic_store_n(&l->head, head, __ATOMIC_RELAXED);
    hp_unlock(&l->lock);
    __atomic_fetch_add(&listed, n, __ATOMIC_RELAXED);
}

/* The current batch is empty: the other one, else one from the thread's list, else from
 * another list when other threads gave slots back (a thread that frees what another allocates
 * gives them to its own list), else MAG_MOVE fresh ones. It stays empty only when the array is
 * full. */
static HP_COLD void mag_refill(struct slot *s)
{
    if (mine.prev_head) {
        mine.head = mine.prev_head;
        mine.n = mine.prev_n;
        mine.prev_head = mine.prev_n = 0;
        return;
    }
    struct list *l = my_list();
    if (take_from(l, s))
        return;
    if (__atomic_load_n(&listed, __ATOMIC_RELAXED) >= MAG_MOVE) {
        unsigned me = (unsigned)(l - lists);
        for (unsigned k = 1; k < LISTS; k++) {
            struct list *o = &lists[(me + k) % LISTS];
            if (__atomic_load_n(&o->head, __ATOMIC_RELAXED) && take_from(o, s))
                return;
        }
    }
    uint32_t first = take_fresh(MAG_MOVE);
    if (first == UINT32_MAX)
        return;
    for (uint32_t i = 0; i < MAG_MOVE; i++)
        s[first + i].w1 = i + 1 < MAG_MOVE ? first + i + 2 : 0;
    mine.head = first + 1;
    mine.n = MAG_MOVE;
}

/* The current batch is full: the other one to the list, the full one in its place, and the
 * current one starts empty. */
static HP_COLD void mag_spill(struct slot *s)
{
    give_batch(s, mine.prev_head, mine.prev_n);
    mine.prev_head = mine.head;
    mine.prev_n = mine.n;
    mine.head = mine.n = 0;
}

uint32_t hp_shadow_live_add(uintptr_t user, uint64_t size, uint32_t ctx)
{
    struct slot *s = slot_array();
    if (!s || !(user >> 5)) {
        __atomic_fetch_add(&dropped, 1, __ATOMIC_RELAXED);
        return 0;
    }
    uint32_t i;
    if (HP_UNLIKELY(mine.busy)) {
        i = take_fresh(1);
    } else {
        mine.busy = 1;
        __atomic_signal_fence(__ATOMIC_SEQ_CST);
        if (HP_UNLIKELY(!mine.head))
            mag_refill(s);
        i = mine.head - 1; /* UINT32_MAX when still empty: no slot to be had */
        if (HP_LIKELY(mine.head)) {
            mine.head = (uint32_t)s[i].w1;
            mine.n--;
        }
        __atomic_signal_fence(__ATOMIC_SEQ_CST);
        mine.busy = 0;
    }
    if (i == UINT32_MAX)
        return 0;
    fill(&s[i], user, size, ctx);
    return i + 1;
}

void hp_shadow_live_del(uint32_t ref, uintptr_t user)
{
    struct slot *s = __atomic_load_n(&slots, __ATOMIC_ACQUIRE);
    if (!s || ref == 0 || ref > SLOTS_MAX || slot_key(&s[ref - 1]) != (user >> 5 & KEY_MASK))
        return;
    struct slot *sl = &s[ref - 1];
    __atomic_store_n(&sl->w0, 0, __ATOMIC_RELEASE);
    /* Interrupting an operation of its thread, a signal handler leaves the slot out of every
     * list: it is lost, 16 bytes. */
    if (HP_UNLIKELY(mine.busy))
        return;
    mine.busy = 1;
    __atomic_signal_fence(__ATOMIC_SEQ_CST);
    if (HP_UNLIKELY(mine.n == MAG_MOVE))
        mag_spill(s);
    sl->w1 = mine.head;
    mine.head = ref;
    mine.n++;
    __atomic_signal_fence(__ATOMIC_SEQ_CST);
    mine.busy = 0;
}

void hp_shadow_live_thread_exit(void)
{
    struct slot *s = __atomic_load_n(&slots, __ATOMIC_ACQUIRE);
    if (!s || mine.busy)
        return;
    mine.busy = 1;
    __atomic_signal_fence(__ATOMIC_SEQ_CST);
    give_batch(s, mine.head, mine.n);
    give_batch(s, mine.prev_head, mine.prev_n);
    mine.head = mine.n = mine.prev_head = mine.prev_n = 0;
    __atomic_signal_fence(__ATOMIC_SEQ_CST);
    mine.busy = 0;
}

/* Without the lists' locks: a slot read while its block is made or freed is taken or left as
 * the key says before and after reading the rest (a block freed and another made in the same
 * slot meanwhile, with the same key, would give the new one's context: harmless). */
void hp_shadow_live_foreach(void (*fn)(uintptr_t user, uint64_t size, uint32_t ctx, void *arg),
                            void *arg)
{
    struct slot *s = __atomic_load_n(&slots, __ATOMIC_ACQUIRE);
    uint32_t n = __atomic_load_n(&used, __ATOMIC_ACQUIRE);
    if (!s)
        return;
    if (n > SLOTS_MAX)
        n = SLOTS_MAX;
    for (uint32_t i = 0; i < n; i++) {
        uint64_t w0 = __atomic_load_n(&s[i].w0, __ATOMIC_ACQUIRE);
        if (!(w0 & KEY_MASK))
            continue;
        uint64_t w1 = __atomic_load_n(&s[i].w1, __ATOMIC_RELAXED);
        __atomic_thread_fence(__ATOMIC_ACQUIRE);
        if (__atomic_load_n(&s[i].w0, __ATOMIC_RELAXED) != w0)
            continue;
        fn((w0 & KEY_MASK) << 5, (w0 >> KEY_BITS) | (w1 >> 32) << SIZE_LO_BITS, (uint32_t)w1, arg);
    }
}

uint64_t hp_shadow_live_bytes(void)
{
    uint64_t n = __atomic_load_n(&used, __ATOMIC_RELAXED);
    return (n < SLOTS_MAX ? n : SLOTS_MAX) * sizeof(struct slot);
}

uint64_t hp_shadow_live_dropped(void) { return __atomic_load_n(&dropped, __ATOMIC_RELAXED); }

/* fork: no list lock may be held by a thread the child does not have. */
void hp_shadow_live_fork_prepare(void)
{
    for (unsigned k = 0; k < LISTS; k++)
        hp_lock(&lists[k].lock);
}

void hp_shadow_live_fork_parent(void)
{
    for (unsigned k = LISTS; k-- > 0;)
        hp_unlock(&lists[k].lock);
}

void hp_shadow_live_fork_child(void)
{
    for (unsigned k = 0; k < LISTS; k++)
        hp_lock_reset(&lists[k].lock);
}
