/* The executable ranges of the process, read from /proc/self/maps (at most once a second, or
 * when code was unloaded): the frame-pointer walk trusts a return address only inside them, or
 * inside an object the loader knows. */
#include "unwind/unwind_internal.h"

#include <dlfcn.h>

struct range {
    uintptr_t start, end;
};

#define MAX_RANGES 8192

/* Two tables: readers use the published one while a refresh fills the other. Refreshes are at
 * least a second apart, far longer than any reader holds a table. */
static struct range tables[2][MAX_RANGES];
static struct range *exec_tab;
static int exec_n, cur_tab;
static hp_lock_t refresh_lock = HP_LOCK_INIT;
static uint32_t last_refresh_ms;
uintptr_t hp_shim_lo, hp_shim_hi;
static uint32_t exec_gen = 1;

struct fill_state {
    struct range *t;
    int n;
    uintptr_t self;
};

static int fill_exec(const struct hp_mapping *m, void *arg)
{
    struct fill_state *s = arg;
    if (!(m->prot & 4) || s->n >= MAX_RANGES)
        return 0;
    s->t[s->n].start = m->start;
    s->t[s->n].end = m->end;
    s->n++;
    if (s->self >= m->start && s->self < m->end) {
        hp_shim_lo = m->start;
        hp_shim_hi = m->end;
    }
    return 0;
}

void hp_maps_refresh(int force)
{
    uint32_t now = hp_now_ms();
    if (!force && exec_tab && now - last_refresh_ms < 1000)
        return;
    if (!hp_trylock(&refresh_lock))
        return;
    int next = exec_tab ? !cur_tab : 0;
    struct fill_state s = {tables[next], 0, (uintptr_t)&hp_maps_refresh};
    if (hp_maps_foreach(fill_exec, &s) == 0 && s.n > 0) {
        __atomic_store_n(&exec_n, 0, __ATOMIC_RELEASE);
        __atomic_store_n(&exec_tab, s.t, __ATOMIC_RELEASE);
        __atomic_store_n(&exec_n, s.n, __ATOMIC_RELEASE);
        __atomic_add_fetch(&exec_gen, 1, __ATOMIC_RELEASE);
        cur_tab = next;
    }
    last_refresh_ms = now;
    hp_unlock(&refresh_lock);
}

/* The ranges this thread hit last, tagged with the table generation they came from. */
static __thread struct {
    uintptr_t start[2], end[2];
    uint32_t gen, next;
} hit_cache __attribute__((tls_model("initial-exec")));

/* The table range holding pc, or NULL. */
static const struct range *find_range(uintptr_t pc)
{
    int n = __atomic_load_n(&exec_n, __ATOMIC_ACQUIRE);
    const struct range *t = __atomic_load_n(&exec_tab, __ATOMIC_ACQUIRE);
    int l = 0, h = n - 1;
    while (l <= h) {
        int mid = (l + h) / 2;
        if (pc < t[mid].start)
            h = mid - 1;
        else if (pc >= t[mid].end)
            l = mid + 1;
        else
            return &t[mid];
    }
    return NULL;
}

/* Is pc in a range of the table? Say which: [*lo, *hi). The two ranges this thread hit last are
 * tried before the table's binary search. */
static int exec_lookup(uintptr_t pc, uintptr_t *lo, uintptr_t *hi)
{
    uint32_t gen = __atomic_load_n(&exec_gen, __ATOMIC_ACQUIRE);
    if (HP_LIKELY(hit_cache.gen == gen)) {
        for (int k = 0; k < 2; k++)
            if (pc >= hit_cache.start[k] && pc < hit_cache.end[k]) {
                *lo = hit_cache.start[k];
                *hi = hit_cache.end[k];
                return 1;
            }
    } else {
        hit_cache.start[0] = hit_cache.end[0] = hit_cache.start[1] = hit_cache.end[1] = 0;
        hit_cache.gen = gen;
    }
    const struct range *r = find_range(pc);
    if (!r)
        return 0;
    uint32_t k = hit_cache.next++ & 1;
    hit_cache.start[k] = *lo = r->start;
    hit_cache.end[k] = *hi = r->end;
    return 1;
}

/* In an object the loader knows, though not in the table: maybe one loaded since the table was
 * built. The loader's own lookup takes no lock and knows every object at once. */
static int in_loaded_object(uintptr_t pc)
{
#if defined(__x86_64__) || defined(__aarch64__)
    struct dl_find_object fo;
    return _dl_find_object((void *)pc, &fo) == 0;
#else
    (void)pc;
    return 0;
#endif
}

/* Like hp_is_exec, and say which range: [*lo, *hi). */
int hp_exec_range(uintptr_t pc, uintptr_t *lo, uintptr_t *hi)
{
    if (exec_lookup(pc, lo, hi))
        return 1;
    if (in_loaded_object(pc)) {
        *lo = pc; /* a loaded object outside the table: no range to remember */
        *hi = pc + 1;
        return 1;
    }
    return 0;
}

int hp_is_exec(uintptr_t pc) { return hp_is_exec_mapping(pc) || in_loaded_object(pc); }

int hp_is_exec_mapping(uintptr_t pc)
{
    uintptr_t lo, hi;
    return exec_lookup(pc, &lo, &hi);
}

void hp_exec_ranges_fork_child(void)
{
    hp_lock_reset(&refresh_lock);
    hp_maps_fork_child();
}
