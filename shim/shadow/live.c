/* The registry of live blocks while the shadow is on: user pointer, size and context of each
 * block the shim handed out and has not taken back, so that a dump can fold the access counts
 * of blocks still live into their contexts (hp_shadow_peek), as the exit rule folds live blocks
 * into HIBs. Nothing is kept while the shadow is off. */
#include "shadow/shadow.h"
#include "shadow/shadow_internal.h"
#include "rt/rt.h"

/* Shards of open-addressing tables (linear probing, deletion by backward shift), one lock
 * each: threads allocating at once seldom meet on one. A table grows by doubling at 3/4 full,
 * so a live block costs 21 to 43 bytes of the registry (16 per entry: bench/access_bench's
 * million small blocks live at once took 48 MiB of tables with 24-byte entries). */
#define SHARDS_LOG 6
#define SHARDS (1u << SHARDS_LOG)
#define TABLE_MIN 256u

/* An operation, and what it is about. */
struct entry {
    uintptr_t user;
    uint64_t size;
    uint32_t ctx, pad; /* ctx UINT32_MAX: a deletion */
};

/* A table's slot: the user pointer's bits 5..46 (a user pointer is a multiple of 32 below
 * 2^47; 0: empty), the size (below 2^54) and the context packed in two words. */
struct slot {
    uint64_t w0; /* user >> 5 | (size & (2^22 - 1)) << 42 */
    uint64_t w1; /* ctx | (size >> 22) << 32 */
};
#define KEY_BITS 42
#define KEY_MASK ((UINT64_C(1) << KEY_BITS) - 1)
#define SIZE_LO_BITS (64 - KEY_BITS)

static inline uint64_t slot_key(const struct slot *s) { return s->w0 & KEY_MASK; }
static inline struct slot pack(const struct entry *e)
{
    struct slot s = {(e->user >> 5) | (e->size << KEY_BITS),
                     e->ctx | (e->size >> SIZE_LO_BITS) << 32};
    return s;
}
static inline uintptr_t slot_user(const struct slot *s) { return (uintptr_t)slot_key(s) << 5; }
static inline uint64_t slot_size(const struct slot *s)
{
    return (s->w0 >> KEY_BITS) | (s->w1 >> 32) << SIZE_LO_BITS;
}
static inline uint32_t slot_ctx(const struct slot *s) { return (uint32_t)s->w1; }

struct shard {
    hp_lock_t lock;
    struct slot *tab;
    uint64_t mask; /* entries - 1; tab NULL: no table yet */
    uint64_t count;
} __attribute__((aligned(HP_CACHELINE)));

static struct shard shards[SHARDS];
static uint64_t table_bytes; /* of every shard's table */
static uint64_t dropped;     /* operations of signal handlers that found no room (pending) */

static inline uint64_t key_hash(uint64_t key) { return hp_mix64(key); }
static inline struct shard *shard_of(uint64_t h) { return &shards[h >> (64 - SHARDS_LOG)]; }

static struct slot *map_table(uint64_t n)
{
    long m = sys_mmap(0, n * sizeof(struct slot), 0);
    if (m < 0 && m > -4096)
        return NULL;
    __atomic_fetch_add(&table_bytes, n * sizeof(struct slot), __ATOMIC_RELAXED);
    return (struct slot *)m;
}

static void unmap_table(struct slot *t, uint64_t n)
{
    sys_munmap((uintptr_t)t, n * sizeof(struct slot));
    __atomic_fetch_sub(&table_bytes, n * sizeof(struct slot), __ATOMIC_RELAXED);
}

/* Put sl into a table with room for it (no such key in it). */
static void place(struct slot *tab, uint64_t mask, const struct slot *sl)
{
    uint64_t i = key_hash(slot_key(sl)) & mask;
    while (slot_key(&tab[i]))
        i = (i + 1) & mask;
    tab[i] = *sl;
}

/* Room for one more entry in s (lock held); 0 when there is no memory for it. */
static int make_room(struct shard *s)
{
    uint64_t n = s->tab ? s->mask + 1 : 0;
    if (s->tab && (s->count + 1) * 4 <= n * 3)
        return 1;
    uint64_t nn = n ? n * 2 : TABLE_MIN;
    struct slot *t = map_table(nn);
    if (!t)
        return s->tab && s->count < n; /* full but for its last slots: keep going */
    for (uint64_t i = 0; i < n; i++)
        if (slot_key(&s->tab[i]))
            place(t, nn - 1, &s->tab[i]);
    if (s->tab)
        unmap_table(s->tab, n);
    s->tab = t;
    s->mask = nn - 1;
    return 1;
}

static void op_add(const struct entry *e)
{
    uint64_t key = e->user >> 5, h = key_hash(key);
    struct shard *s = shard_of(h);
    hp_lock(&s->lock);
    if (make_room(s)) {
        uint64_t i = h & s->mask;
        while (slot_key(&s->tab[i]) && slot_key(&s->tab[i]) != key)
            i = (i + 1) & s->mask;
        /* The same address twice: a block whose free the registry missed (see pending). */
        s->count += slot_key(&s->tab[i]) == 0;
        s->tab[i] = pack(e);
    }
    hp_unlock(&s->lock);
}

static void op_del(uintptr_t user)
{
    uint64_t key = user >> 5, h = key_hash(key);
    struct shard *s = shard_of(h);
    hp_lock(&s->lock);
    if (s->tab) {
        uint64_t m = s->mask, i = h & m;
        while (slot_key(&s->tab[i]) && slot_key(&s->tab[i]) != key)
            i = (i + 1) & m;
        if (slot_key(&s->tab[i])) {
            /* Backward shift: entries after the hole that may live there move into it. */
            uint64_t j = i;
            for (;;) {
                j = (j + 1) & m;
                if (!slot_key(&s->tab[j]))
                    break;
                uint64_t home = key_hash(slot_key(&s->tab[j])) & m;
                if (((j - home) & m) >= ((j - i) & m)) {
                    s->tab[i] = s->tab[j];
                    i = j;
                }
            }
            s->tab[i].w0 = s->tab[i].w1 = 0;
            s->count--;
        }
    }
    hp_unlock(&s->lock);
}

/* ---------- signal handlers ----------
 * A handler that interrupts this thread while it holds a shard's lock (or is about to take
 * one) and allocates would wait for that lock for ever. So a thread marks itself busy around
 * its operations; a handler that finds it busy leaves its operation in the thread's pending
 * list, which the interrupted operation applies, in order, before it lets go. */
#define PENDING_MAX 8 /* per thread, in static TLS: kept small */

struct pending {
    volatile uint32_t n;
    struct entry op[PENDING_MAX]; /* ctx == UINT32_MAX: a deletion */
};

static __thread int busy;
static __thread struct pending pending;

static void apply(const struct entry *e)
{
    if (e->ctx == UINT32_MAX)
        op_del(e->user);
    else
        op_add(e);
}

static void leave_pending(const struct entry *e)
{
    for (;;) {
        uint32_t n = __atomic_load_n(&pending.n, __ATOMIC_ACQUIRE);
        if (n >= PENDING_MAX) {
            __atomic_fetch_add(&dropped, 1, __ATOMIC_RELAXED);
            return;
        }
        pending.op[n] = *e;
        __atomic_signal_fence(__ATOMIC_SEQ_CST);
        if (__atomic_compare_exchange_n(&pending.n, &n, n + 1, 0, __ATOMIC_ACQ_REL, __ATOMIC_RELAXED))
            return;
    }
}

/* Apply what handlers left, oldest first, then stop being busy; a handler that comes after
 * that applies its own operation. */
static void drain_and_leave(void)
{
    for (;;) {
        uint32_t head = 0;
        for (;;) {
            uint32_t n = __atomic_load_n(&pending.n, __ATOMIC_ACQUIRE);
            if (head < n) {
                struct entry p = pending.op[head++];
                apply(&p);
                continue;
            }
            if (__atomic_compare_exchange_n(&pending.n, &n, 0, 0, __ATOMIC_ACQ_REL, __ATOMIC_RELAXED))
                break;
        }
        __atomic_signal_fence(__ATOMIC_SEQ_CST);
        busy = 0;
        __atomic_signal_fence(__ATOMIC_SEQ_CST);
        /* A handler between the last look and busy = 0 left its operation: take it. */
        if (!__atomic_load_n(&pending.n, __ATOMIC_ACQUIRE))
            return;
        busy = 1;
        __atomic_signal_fence(__ATOMIC_SEQ_CST);
    }
}

static void run(const struct entry *e)
{
    if (busy) {
        leave_pending(e);
        return;
    }
    busy = 1;
    __atomic_signal_fence(__ATOMIC_SEQ_CST);
    apply(e);
    drain_and_leave();
}

void hp_shadow_live_add(uintptr_t user, uint64_t size, uint32_t ctx)
{
    struct entry e = {user, size, ctx, 0};
    run(&e);
}

void hp_shadow_live_del(uintptr_t user)
{
    struct entry e = {user, 0, UINT32_MAX, 0};
    run(&e);
}

void hp_shadow_live_foreach(void (*fn)(uintptr_t user, uint64_t size, uint32_t ctx, void *arg),
                            void *arg)
{
    busy = 1;
    __atomic_signal_fence(__ATOMIC_SEQ_CST);
    for (unsigned k = 0; k < SHARDS; k++) {
        struct shard *s = &shards[k];
        hp_lock(&s->lock);
        for (uint64_t i = 0; s->tab && i <= s->mask; i++)
            if (slot_key(&s->tab[i]))
                fn(slot_user(&s->tab[i]), slot_size(&s->tab[i]), slot_ctx(&s->tab[i]), arg);
        hp_unlock(&s->lock);
    }
    drain_and_leave();
}

uint64_t hp_shadow_live_bytes(void) { return __atomic_load_n(&table_bytes, __ATOMIC_RELAXED); }
uint64_t hp_shadow_live_dropped(void) { return __atomic_load_n(&dropped, __ATOMIC_RELAXED); }

/* fork: no shard lock may be held by a thread the child does not have. */
void hp_shadow_live_fork_prepare(void)
{
    for (unsigned k = 0; k < SHARDS; k++)
        hp_lock(&shards[k].lock);
}

void hp_shadow_live_fork_parent(void)
{
    for (unsigned k = SHARDS; k-- > 0;)
        hp_unlock(&shards[k].lock);
}

void hp_shadow_live_fork_child(void)
{
    for (unsigned k = 0; k < SHARDS; k++)
        hp_lock_reset(&shards[k].lock);
}
