/* A small test-and-test-and-set spinlock for the shim's short critical sections; it never
 * allocates and yields the cpu when contended, so it is safe on the malloc path. */
#ifndef HP_LOCK_H
#define HP_LOCK_H

#include <sched.h>

typedef struct {
    volatile int v;
} hp_lock_t;

#define HP_LOCK_INIT {0}

static inline void hp_cpu_relax(void)
{
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#elif defined(__aarch64__)
    __asm__ volatile("yield");
#endif
}

static inline int hp_trylock(hp_lock_t *l)
{
    return __atomic_load_n(&l->v, __ATOMIC_RELAXED) == 0 &&
           __atomic_exchange_n(&l->v, 1, __ATOMIC_ACQUIRE) == 0;
}

/* Set when the process is crashing (a fault or abort): its memory, the shim's locks included,
 * may be damaged, and a lock that stays taken for about a second is then taken anyway, so
 * the profile written on the way down can never turn the crash into a hang. */
extern volatile int hp_crashing;

/* The contended case, out of line (util.c): the inlined part stays two instructions. */
void hp_lock_slow(hp_lock_t *l);

static inline void hp_lock(hp_lock_t *l)
{
    if (__builtin_expect(!hp_trylock(l), 0))
        hp_lock_slow(l);
}

static inline void hp_unlock(hp_lock_t *l) { __atomic_store_n(&l->v, 0, __ATOMIC_RELEASE); }

/* Only for the child after fork, where the owner of a held lock no longer exists. */
static inline void hp_lock_reset(hp_lock_t *l) { __atomic_store_n(&l->v, 0, __ATOMIC_RELAXED); }

#endif
