/* The address-keyed tables of blocks without a shim header (pool_internal.h): 64 shards by the
 * address's hash, each an open-addressing table with linear probing under its own lock, grown
 * from the metadata arena. No libc, no allocation through the shim. */
#include "core/pool_internal.h"
#include "rt/rt.h"

/* 64 shards: threads reporting objects at different addresses seldom meet on a lock. */
#define SHARDS_LOG 6
#define SHARDS (1u << SHARDS_LOG)
#define FIRST_CAP 256u /* slots of a shard's first table: 10 KiB */

struct shard {
    hp_lock_t lock;
    uint32_t count;      /* objects in slots */
    uint64_t mask;       /* slots - 1; 0 before the first table */
    struct hp_pool_obj *slots;
} __attribute__((aligned(HP_CACHELINE)));

struct hp_ptab {
    struct shard shards[SHARDS];
};

struct hp_ptab hp_pool_objs, hp_headerless_blocks;
static struct hp_ptab *const tables[] = {&hp_pool_objs, &hp_headerless_blocks};
#define NTABLES (sizeof tables / sizeof tables[0])

/* One multiply mixes the address: objects of a pool are often at a fixed stride. */
static inline uint64_t mix(uintptr_t a) { return (uint64_t)a * 0x9e3779b97f4a7c15ull; }
static inline struct shard *shard_of(struct hp_ptab *t, uintptr_t a)
{
    return &t->shards[mix(a) >> (64 - SHARDS_LOG)];
}
static inline uint64_t home(const struct shard *s, uintptr_t a) { return (mix(a) >> 8) & s->mask; }

/* The slot holding addr, or the empty slot where it would go (table not full: load <= 1/2). */
static uint64_t find(const struct shard *s, uintptr_t addr)
{
    uint64_t i = home(s, addr);
    while (s->slots[i].addr && s->slots[i].addr != addr)
        i = (i + 1) & s->mask;
    return i;
}

/* Double s's table (or make the first one); 0 without metadata. Old tables stay in the arena,
 * which never frees: at most as much again as the largest table. */
static int grow(struct shard *s)
{
    uint64_t cap = s->mask ? (s->mask + 1) * 2 : FIRST_CAP;
    struct hp_pool_obj *fresh = hp_meta_alloc(cap * sizeof *fresh);
    if (!fresh)
        return 0;
    struct hp_pool_obj *old = s->slots;
    uint64_t oldcap = s->mask ? s->mask + 1 : 0;
    s->slots = fresh;
    s->mask = cap - 1;
    for (uint64_t i = 0; i < oldcap; i++)
        if (old[i].addr)
            s->slots[find(s, old[i].addr)] = old[i];
    return 1;
}

int hp_ptab_insert(struct hp_ptab *t, const struct hp_pool_obj *o, struct hp_pool_obj *old)
{
    struct shard *s = shard_of(t, o->addr);
    hp_lock(&s->lock);
    if ((uint64_t)(s->count + 1) * 2 > (s->mask ? s->mask + 1 : 0) && !grow(s)) {
        hp_unlock(&s->lock);
        return 0;
    }
    uint64_t i = find(s, o->addr);
    int r = 1;
    if (s->slots[i].addr) {
        *old = s->slots[i];
        r = 2;
    } else {
        s->count++;
    }
    s->slots[i] = *o;
    hp_unlock(&s->lock);
    return r;
}

/* Empty slot i and move the objects after it back over the hole where their probe sequence
 * allows (backward-shift deletion: no tombstones, probes stay short). */
static void delete_at(struct shard *s, uint64_t i)
{
    uint64_t j = i;
    for (;;) {
        j = (j + 1) & s->mask;
        if (!s->slots[j].addr)
            break;
        uint64_t h = home(s, s->slots[j].addr);
        /* The object at j may fill hole i unless its home lies cyclically in (i, j]. */
        if (((j - h) & s->mask) >= ((j - i) & s->mask)) {
            s->slots[i] = s->slots[j];
            i = j;
        }
    }
    s->slots[i].addr = 0;
    s->count--;
}

int hp_ptab_remove(struct hp_ptab *t, uintptr_t addr, struct hp_pool_obj *out)
{
    struct shard *s = shard_of(t, addr);
    int r = 0;
    hp_lock(&s->lock);
    if (s->mask) {
        uint64_t i = find(s, addr);
        if (s->slots[i].addr) {
            *out = s->slots[i];
            delete_at(s, i);
            r = 1;
        }
    }
    hp_unlock(&s->lock);
    return r;
}

size_t hp_ptab_take_pool(struct hp_ptab *t, uintptr_t pool, unsigned *cursor, struct hp_pool_obj *out, size_t max)
{
    size_t n = 0;
    for (; *cursor < SHARDS && n == 0; ) {
        struct shard *s = &t->shards[*cursor];
        hp_lock(&s->lock);
        /* A deletion moves a later object into slot i: look at i again before going on (an
         * object moved from the table's start to its end is seen twice, which is harmless). */
        for (uint64_t i = 0; s->mask && i <= s->mask && n < max;) {
            if (s->slots[i].addr && s->slots[i].pool == pool) {
                out[n++] = s->slots[i];
                delete_at(s, i);
            } else {
                i++;
            }
        }
        hp_unlock(&s->lock);
        if (n < max)
            ++*cursor; /* this shard has no more of the pool */
    }
    return n;
}

uint64_t hp_ptab_count(struct hp_ptab *t)
{
    uint64_t n = 0;
    for (unsigned i = 0; i < SHARDS; i++)
        n += __atomic_load_n(&t->shards[i].count, __ATOMIC_RELAXED);
    return n;
}

/* Fork: the tables in the order of tables[], each shard in order. */
void hp_ptab_fork_prepare(void)
{
    for (unsigned k = 0; k < NTABLES; k++)
        for (unsigned i = 0; i < SHARDS; i++)
            hp_lock(&tables[k]->shards[i].lock);
}

void hp_ptab_fork_parent(void)
{
    for (unsigned k = NTABLES; k-- > 0;)
        for (unsigned i = 0; i < SHARDS; i++)
            hp_unlock(&tables[k]->shards[i].lock);
}

void hp_ptab_fork_child(void)
{
    for (unsigned k = 0; k < NTABLES; k++)
        for (unsigned i = 0; i < SHARDS; i++)
            hp_lock_reset(&tables[k]->shards[i].lock);
}
