/* Metadata arena (rt.h): a bump allocator over 2 MiB mmap chunks behind one spinlock;
 * it is only used on slow paths (a new context, a new thread, table setup). */
#include "rt/rt.h"

#include <errno.h>
#include <sys/mman.h>

#define CHUNK_SIZE (2u << 20)

static hp_lock_t meta_lock = HP_LOCK_INIT;
static char *cur, *cur_end;
static uint64_t used, budget = 64ull << 20;
static int warned;

/* Every mapping of the arena, so a dump can say how much of it is resident (most of a table
 * stays untouched). Mappings past the last slot are left out of that figure. */
#define MAX_REGIONS 4096
static struct {
    char *p;
    size_t size;
} regions[MAX_REGIONS];
static unsigned nregions;

static void note_region(void *p, size_t size) /* with meta_lock held */
{
    if (nregions < MAX_REGIONS) {
        regions[nregions].p = p;
        regions[nregions].size = size;
        __atomic_store_n(&nregions, nregions + 1, __ATOMIC_RELEASE);
    }
}

static void *map_region(size_t size);

void hp_meta_init(uint64_t budget_bytes) { budget = budget_bytes; }

/* A small region for signal handlers that allocate while their thread holds meta_lock (it is
 * making a context of its own): they cannot wait for it, so they cut their contexts from here,
 * with an atomic add. Mapped by the first handler that needs it (mmap is a system call, safe
 * in a handler), and counted in what the arena uses from then on. */
#define RESERVE_SIZE (256u << 10)
static char *reserve;
static size_t reserve_used, reserve_mapped;

static void *from_reserve(size_t size)
{
    char *r = __atomic_load_n(&reserve, __ATOMIC_ACQUIRE);
    if (!r) {
        if (__atomic_load_n(&used, __ATOMIC_RELAXED) + RESERVE_SIZE > budget)
            return NULL;
        char *m = map_region(RESERVE_SIZE);
        if (!m)
            return NULL;
        char *none = NULL;
        if (__atomic_compare_exchange_n(&reserve, &none, m, 0, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE)) {
            __atomic_store_n(&reserve_mapped, RESERVE_SIZE, __ATOMIC_RELAXED);
            r = m;
        } else {
            munmap(m, RESERVE_SIZE);
            r = none;
        }
    }
    size_t at = __atomic_fetch_add(&reserve_used, size, __ATOMIC_RELAXED);
    return at + size <= RESERVE_SIZE ? r + at : NULL;
}

int hp_meta_map_errno;

static void *map_region(size_t size)
{
    void *p = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE,
                   -1, 0);
    if (p == MAP_FAILED) {
        __atomic_store_n(&hp_meta_map_errno, errno, __ATOMIC_RELAXED);
        return NULL;
    }
    return p;
}

static int over_budget(size_t size)
{
    if (used + __atomic_load_n(&reserve_mapped, __ATOMIC_RELAXED) + size <= budget)
        return 0;
    if (!warned) {
        warned = 1;
        hp_warn("metadata budget of %llu MiB reached; new contexts are no longer recorded "
                "(raise metadata_budget_mb)", (unsigned long long)(budget >> 20));
    }
    return 1;
}

/* The lock for a caller that may have interrupted its holder (a signal handler on the thread
 * that holds it): when it is taken, a block from the reserve; with the reserve spent, the lock
 * tried for a while (another thread may hold it), never waited on for good. */
static int lock_nested(size_t size, void **from)
{
    *from = NULL;
    if (hp_trylock(&meta_lock))
        return 1;
    if ((*from = from_reserve(size)) != NULL)
        return 0;
    for (int i = 0; i < 4096; i++) {
        if (hp_trylock(&meta_lock))
            return 1;
        hp_cpu_relax();
    }
    return 0;
}

static void *meta_alloc(size_t size, int nested)
{
    if (size > CHUNK_SIZE / 4 && nested)
        return NULL;
    if (size > CHUNK_SIZE)
        return hp_meta_map(size);
    size = (size + HP_CACHELINE - 1) & ~(size_t)(HP_CACHELINE - 1);
    if (size > CHUNK_SIZE / 4)
        return hp_meta_map(size);
    void *spare;
    if (!nested)
        hp_lock(&meta_lock);
    else if (!lock_nested(size, &spare))
        return spare;
    void *r = NULL;
    if ((size_t)(cur_end - cur) < size) {
        if (over_budget(CHUNK_SIZE)) {
            hp_unlock(&meta_lock);
            return NULL;
        }
        char *c = map_region(CHUNK_SIZE);
        if (!c) {
            hp_unlock(&meta_lock);
            return NULL;
        }
        used += CHUNK_SIZE;
        note_region(c, CHUNK_SIZE);
        cur = c;
        cur_end = c + CHUNK_SIZE;
    }
    r = cur;
    cur += size;
    hp_unlock(&meta_lock);
    return r;
}

void *hp_meta_alloc(size_t size) { return meta_alloc(size, 0); }
void *hp_meta_alloc_nested(size_t size) { return meta_alloc(size, 1); }

void *hp_meta_map(size_t size)
{
    if (size > ((size_t)1 << 46))
        return NULL;
    size = (size + 4095) & ~(size_t)4095;
    hp_lock(&meta_lock);
    if (over_budget(size)) {
        hp_unlock(&meta_lock);
        return NULL;
    }
    used += size;
    hp_unlock(&meta_lock);
    void *p = map_region(size);
    hp_lock(&meta_lock);
    if (p)
        note_region(p, size);
    else
        used -= size;
    hp_unlock(&meta_lock);
    return p;
}

uint64_t hp_meta_resident(void)
{
    /* No mincore under a seccomp filter: what is in use stands in for what is resident. */
    if (__atomic_load_n(&hp_filtered, __ATOMIC_RELAXED))
        return hp_meta_used();
    static unsigned char vec[4096];
    static hp_lock_t vec_lock = HP_LOCK_INIT;
    uint64_t pages = 0;
    unsigned n = __atomic_load_n(&nregions, __ATOMIC_ACQUIRE);
    hp_lock(&vec_lock);
    for (unsigned i = 0; i < n; i++) {
        for (size_t off = 0; off < regions[i].size; off += sizeof vec * 4096) {
            size_t len = regions[i].size - off;
            if (len > sizeof vec * 4096)
                len = sizeof vec * 4096;
            if (mincore(regions[i].p + off, len, vec) != 0)
                continue;
            for (size_t k = 0; k < (len + 4095) / 4096; k++)
                pages += vec[k] & 1;
        }
    }
    hp_unlock(&vec_lock);
    return pages * 4096;
}

uint64_t hp_meta_used(void)
{
    return __atomic_load_n(&used, __ATOMIC_RELAXED) + __atomic_load_n(&reserve_mapped, __ATOMIC_RELAXED);
}
uint64_t hp_meta_budget(void) { return budget; }
void hp_meta_fork_prepare(void) { hp_lock(&meta_lock); }
void hp_meta_fork_parent(void) { hp_unlock(&meta_lock); }
void hp_meta_fork_child(void) { hp_lock_reset(&meta_lock); }
