/* The registry of live blocks while the shadow is on: user pointer, size and context of each
 * block the shim handed out and has not taken back, so that a dump can fold the access counts
 * of blocks still live into their contexts (hp_shadow_peek), as the exit rule folds live blocks
 * into HIBs. Nothing is kept while the shadow is off. */
#include "shadow/shadow.h"
#include "shadow/shadow_internal.h"
#include "rt/rt.h"

/* Shards of open-addressing tables (linear probing, deletion by backward shift), one lock
 * each: threads allocating at once seldom meet on one. A table grows by doubling at 3/4 full,
 * so a live block costs 32 to 64 bytes of the registry (24 per entry). */
#define SHARDS_LOG 6
#define SHARDS (1u << SHARDS_LOG)
#define TABLE_MIN 256u

struct entry {
    uintptr_t user; /* 0: empty */
    uint64_t size;
    uint32_t ctx, pad;
};

struct shard {
    hp_lock_t lock;
    struct entry *tab;
    uint64_t mask; /* entries - 1; tab NULL: no table yet */
    uint64_t count;
} __attribute__((aligned(HP_CACHELINE)));

static struct shard shards[SHARDS];
static uint64_t table_bytes; /* of every shard's table */
static uint64_t dropped;     /* operations of signal handlers that found no room (pending) */

static inline uint64_t key_hash(uintptr_t user) { return hp_mix64(user); }
static inline struct shard *shard_of(uint64_t h) { return &shards[h >> (64 - SHARDS_LOG)]; }

static struct entry *map_table(uint64_t n)
{
    long m = sys_mmap(0, n * sizeof(struct entry), 0);
    if (m < 0 && m > -4096)
        return NULL;
    __atomic_fetch_add(&table_bytes, n * sizeof(struct entry), __ATOMIC_RELAXED);
    return (struct entry *)m;
}

static void unmap_table(struct entry *t, uint64_t n)
{
    sys_munmap((uintptr_t)t, n * sizeof(struct entry));
    __atomic_fetch_sub(&table_bytes, n * sizeof(struct entry), __ATOMIC_RELAXED);
}

/* Put e into a table with room for it (no such key in it). */
static void place(struct entry *tab, uint64_t mask, const struct entry *e)
{
    uint64_t i = key_hash(e->user) & mask;
    while (tab[i].user)
        i = (i + 1) & mask;
    tab[i] = *e;
}

/* Room for one more entry in s (lock held); 0 when there is no memory for it. */
static int make_room(struct shard *s)
{
    uint64_t n = s->tab ? s->mask + 1 : 0;
    if (s->tab && (s->count + 1) * 4 <= n * 3)
        return 1;
    uint64_t nn = n ? n * 2 : TABLE_MIN;
    struct entry *t = map_table(nn);
    if (!t)
        return s->tab && s->count < n; /* full but for its last slots: keep going */
    for (uint64_t i = 0; i < n; i++)
        if (s->tab[i].user)
            place(t, nn - 1, &s->tab[i]);
    if (s->tab)
        unmap_table(s->tab, n);
    s->tab = t;
    s->mask = nn - 1;
    return 1;
}

static void op_add(const struct entry *e)
{
    struct shard *s = shard_of(key_hash(e->user));
    hp_lock(&s->lock);
    if (make_room(s)) {
        uint64_t i = key_hash(e->user) & s->mask;
        while (s->tab[i].user && s->tab[i].user != e->user)
            i = (i + 1) & s->mask;
        /* The same address twice: a block whose free the registry missed (see pending). */
        s->count += s->tab[i].user == 0;
        s->tab[i] = *e;
    }
    hp_unlock(&s->lock);
}

static void op_del(uintptr_t user)
{
    struct shard *s = shard_of(key_hash(user));
    hp_lock(&s->lock);
    if (s->tab) {
        uint64_t m = s->mask, i = key_hash(user) & m;
        while (s->tab[i].user && s->tab[i].user != user)
            i = (i + 1) & m;
        if (s->tab[i].user) {
            /* Backward shift: entries after the hole that may live there move into it. */
            uint64_t j = i;
            for (;;) {
                j = (j + 1) & m;
                if (!s->tab[j].user)
                    break;
                uint64_t home = key_hash(s->tab[j].user) & m;
                if (((j - home) & m) >= ((j - i) & m)) {
                    s->tab[i] = s->tab[j];
                    i = j;
                }
            }
            s->tab[i].user = 0;
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
            if (s->tab[i].user)
                fn(s->tab[i].user, s->tab[i].size, s->tab[i].ctx, arg);
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
