/* The contended paths of the shim's locks (rt.h): the spinlock's wait, and the owner lock's
 * claim, barrier and wait. */
#include "rt/rt.h"

#include <errno.h>
#include <sched.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

__attribute__((noinline, cold)) void hp_lock_slow(hp_lock_t *l)
{
    unsigned spins = 0;
    while (!hp_trylock(l)) {
        if (++spins < 64) {
            hp_cpu_relax();
        } else {
            sched_yield();
            if (__builtin_expect(hp_crashing, 0) && spins > 200000) {
                __atomic_store_n(&l->v, 1, __ATOMIC_SEQ_CST);
                return;
            }
        }
    }
}

/* ---------- owner locks (rt.h) ---------- */

int hp_olock_asym;

#ifndef MEMBARRIER_CMD_PRIVATE_EXPEDITED
#define MEMBARRIER_CMD_PRIVATE_EXPEDITED (1 << 3)
#define MEMBARRIER_CMD_REGISTER_PRIVATE_EXPEDITED (1 << 4)
#endif

void hp_olock_init(void)
{
    int saved = errno;
    /* Registering costs the kernel an RCU grace period when the process has several threads
     * already; at init it has one. */
    hp_olock_asym = !hp_filtered && syscall(SYS_membarrier, MEMBARRIER_CMD_REGISTER_PRIVATE_EXPEDITED, 0, 0) == 0;
    errno = saved;
}

/* A full fence on every cpu that runs a thread of the process, the caller's included, before
 * this returns. membarrier does it with an interrupt to each such cpu. The registration is
 * the address space's: a forked child keeps it (Linux 6.18; registered again here should a
 * kernel not), exec drops it (the new image's init registers). Should the call fail (a
 * seccomp filter installed without the shim seeing it), the same interrupts come from
 * shooting down a page's translation: a page the process wrote, made inaccessible, is flushed
 * from the TLB of every cpu that may hold it, by interrupting those cpus. Should that fail
 * too, a pause of a millisecond lets any store still buffered reach memory (on real
 * processors it does within far less). */
static void *tlb_page;

static int tlb_shootdown(void)
{
    if (!tlb_page) {
        void *p = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        if (p == MAP_FAILED)
            return -1;
        tlb_page = p;
    }
    if (mprotect(tlb_page, 4096, PROT_READ | PROT_WRITE) != 0)
        return -1;
    /* Present and dirty: a change of protection then has a translation to shoot down. */
    __atomic_fetch_add((volatile int *)tlb_page, 1, __ATOMIC_SEQ_CST);
    return mprotect(tlb_page, 4096, PROT_NONE);
}

static void full_barrier(void)
{
    int saved = errno;
    __atomic_thread_fence(__ATOMIC_SEQ_CST);
    int done = !hp_filtered && syscall(SYS_membarrier, MEMBARRIER_CMD_PRIVATE_EXPEDITED, 0, 0) == 0;
    if (!done && !hp_filtered) /* not registered (above) */
        done = syscall(SYS_membarrier, MEMBARRIER_CMD_REGISTER_PRIVATE_EXPEDITED, 0, 0) == 0 &&
               syscall(SYS_membarrier, MEMBARRIER_CMD_PRIVATE_EXPEDITED, 0, 0) == 0;
    if (!done)
        done = tlb_shootdown() == 0;
    if (!done)
        hp_sleep_ns(1000000);
    __atomic_thread_fence(__ATOMIC_SEQ_CST);
    errno = saved;
}

void hp_olock_barrier(void)
{
    if (__atomic_load_n(&hp_olock_asym, __ATOMIC_SEQ_CST))
        full_barrier();
}

void hp_olock_symmetric(void)
{
    if (!__atomic_load_n(&hp_olock_asym, __ATOMIC_SEQ_CST))
        return;
    __atomic_store_n(&hp_olock_asym, 0, __ATOMIC_SEQ_CST);
    /* After this every owner inside its lock the fast way has its busy flag visible (takers
     * wait for it to go), and every later one reads its lock's sym == 1 and takes the
     * exchange. */
    full_barrier();
}

/* Spin a little, then yield; when the process is crashing, give up after about a second (the
 * other side may be damaged or gone: see hp_crashing). Returns 1 to stop waiting. */
static inline int olock_pause(unsigned *spins)
{
    if (++*spins < 64) {
        hp_cpu_relax();
        return 0;
    }
    sched_yield();
    return __builtin_expect(hp_crashing, 0) && *spins > 200000;
}

/* held taken with an exchange, by an owner on its slow path or by another thread (the claim
 * must be visible before the barrier that follows it: sequentially consistent). */
void hp_olock_claim(hp_olock_t *l)
{
    unsigned spins = 0;
    while (!(__atomic_load_n(&l->held, __ATOMIC_RELAXED) == 0 &&
             __atomic_exchange_n(&l->held, 1, __ATOMIC_SEQ_CST) == 0))
        if (olock_pause(&spins)) {
            __atomic_store_n(&l->held, 1, __ATOMIC_SEQ_CST);
            return;
        }
}

__attribute__((noinline, cold)) void hp_olock_own_slow(hp_olock_t *l) { hp_olock_claim(l); }

void hp_olock_wait(hp_olock_t *l)
{
    unsigned spins = 0;
    while (__atomic_load_n(&l->busy, __ATOMIC_ACQUIRE))
        if (olock_pause(&spins))
            return;
}
