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

/* An owner lock: one thread, the owner, takes it on nearly every event; other threads take it
 * seldom (a dump's flush, a fork). A plain lock costs the owner an atomic exchange each time,
 * which on x86 waits for every store before it to leave the store buffer: 1.5-4% of python3's
 * time under the shim (bench/ab.sh, three measurements; the kept lock gained 3%). Here the
 * owner only stores busy = 1 and reads held (a Dekker handshake with the store-load fence
 * left out); another thread takes held with an atomic exchange, then makes every thread of
 * the process pass a full fence (hp_olock_barrier: membarrier(2)) before it reads busy.
 * After that fence either the owner's busy = 1 is visible to it, or the owner's read of held
 * comes after the fence and sees the claim. When the barrier is not available
 * (hp_olock_asym == 0: an old kernel, a seccomp filter) the lock is symmetric (sym): the
 * owner takes held with an exchange as well, a plain lock. The owner reads held and the mode
 * in one 16-bit load (gate): with the mode in a global, or in a byte of its own read apart,
 * bench/alloc_bench with two threads ran 15% slower (three builds, measured three times each;
 * a load more right after the owner's store, not understood further).
 * With the fields in one 32-bit word, the lock has the size of an hp_lock_t. */
typedef struct {
    union {
        struct {
            volatile unsigned char held; /* taken by another thread, or by the owner on its slow path */
            volatile unsigned char sym;  /* 1: the owner takes held too (hp_olock_prepare) */
        };
        volatile unsigned short gate; /* both: the owner's fast path reads them at once */
    };
    volatile unsigned char busy; /* the owner is inside, on its fast path */
    unsigned char spare;
} hp_olock_t;

/* 1 while owners may take their locks without an atomic instruction (util.c): what
 * hp_olock_prepare gives a lock, and whether takers need the barrier. */
extern int hp_olock_asym;

/* A lock made (or handed to a new owner): symmetric unless the barrier is available. The caller
 * keeps hp_olock_symmetric from running meanwhile. */
static inline void hp_olock_prepare(hp_olock_t *l)
{
    __atomic_store_n(&l->sym, !__atomic_load_n(&hp_olock_asym, __ATOMIC_SEQ_CST), __ATOMIC_SEQ_CST);
}

void hp_olock_own_slow(hp_olock_t *l);

/* The owner takes its lock. Returns what hp_olock_disown needs: 1 for the fast path. */
static inline int hp_olock_own(hp_olock_t *l)
{
    __atomic_store_n(&l->busy, 1, __ATOMIC_RELAXED);
    /* Only the compiler is kept from moving the reads above the store: the processor may,
     * which is what the other side's barrier is for. */
    __atomic_signal_fence(__ATOMIC_SEQ_CST);
    if (__builtin_expect(!__atomic_load_n(&l->gate, __ATOMIC_ACQUIRE), 1))
        return 1;
    __atomic_store_n(&l->busy, 0, __ATOMIC_RELEASE);
    hp_olock_own_slow(l);
    return 0;
}

static inline void hp_olock_disown(hp_olock_t *l, int fast)
{
    if (fast)
        __atomic_store_n(&l->busy, 0, __ATOMIC_RELEASE);
    else
        __atomic_store_n(&l->held, 0, __ATOMIC_RELEASE);
}

/* Another thread takes an owner's lock in three steps, so that taking many costs one barrier:
 * hp_olock_claim on each, hp_olock_barrier once, hp_olock_wait on each. hp_olock_take does
 * the three for one lock. */
void hp_olock_claim(hp_olock_t *l);
void hp_olock_barrier(void);
void hp_olock_wait(hp_olock_t *l);

static inline void hp_olock_take(hp_olock_t *l)
{
    hp_olock_claim(l);
    hp_olock_barrier();
    hp_olock_wait(l);
}

static inline void hp_olock_release(hp_olock_t *l) { __atomic_store_n(&l->held, 0, __ATOMIC_RELEASE); }

/* The child after fork (the mode stays). */
static inline void hp_olock_reset(hp_olock_t *l)
{
    __atomic_store_n(&l->held, 0, __ATOMIC_RELAXED);
    __atomic_store_n(&l->busy, 0, __ATOMIC_RELAXED);
}

/* At init: owners go without an atomic instruction if the kernel offers the barrier
 * (membarrier's private expedited command, registered here) and no seccomp filter is on. */
void hp_olock_init(void);
/* From now on owners take their locks with an exchange (before a seccomp filter is installed:
 * it may refuse membarrier, or kill the process for it): hp_olock_set_symmetric on every lock
 * there is, then hp_olock_symmetric. The caller keeps other threads from taking owner locks,
 * and from preparing new ones, meanwhile. */
static inline void hp_olock_set_symmetric(hp_olock_t *l) { __atomic_store_n(&l->sym, 1, __ATOMIC_SEQ_CST); }
void hp_olock_symmetric(void);

#endif
