/* How a dump reads one moment: every thread's cache is flushed at once (hp_profile_flush_all),
 * and moves out of the caches wait while the dump is written (hp_profile_hold). */
#include "profile/profile_internal.h"

int hp_cache_hold, hp_cache_moving, hp_cache_flushing;
struct hp_tls *hp_cache_flusher;

static void wait_hold(void)
{
    while (hp_moves_held())
        hp_sleep_ns(50000);
}

void hp_move_begin(void)
{
    while (!hp_move_try())
        wait_hold();
}

void hp_profile_hold(int on)
{
    __atomic_store_n(&hp_cache_hold, on, __ATOMIC_SEQ_CST);
    /* Moves that began before the hold end before the dump reads anything. */
    while (on && __atomic_load_n(&hp_cache_moving, __ATOMIC_SEQ_CST))
        hp_cpu_relax();
    /* No push comes now until the hold ends. */
    __atomic_store_n(&hp_cache_flushing, 0, __ATOMIC_RELEASE);
}

/* Every cache's lock, taken from its owner (the registry held): one barrier for all of them. */
void hp_take_all(struct hp_thread *first)
{
    for (struct hp_thread *t = first; t; t = t->next_all)
        hp_olock_claim(&t->lock);
    hp_olock_barrier();
    for (struct hp_thread *t = first; t; t = t->next_all)
        hp_olock_wait(&t->lock);
}

/* Every thread's cache is taken at one moment: all their locks first (the registry held, so
 * that no cache is made meanwhile), then each flushed and let go. A cache flushed while another
 * thread still recorded would let the dump count the free of a block allocated after the
 * allocating thread's flush (a block one thread allocates and another frees): alloc_count one
 * above allocs (the test busy-dumps-shared). Taken this way, every
 * thread's changes stop at the moment its lock was taken, and a block's allocation is
 * recorded before the program has its address, so every free the dump counts has its
 * allocation counted too. A thread waits for the flushes before its own. */
void hp_profile_flush_all(void)
{
    hp_cache_flusher = &hp_tls;
    hp_lock(&hp_registry_lock);
    struct hp_thread *first = hp_all_threads;
    hp_take_all(first);
    hp_unlock(&hp_registry_lock);
    /* Only now, with every lock taken: a thread in an event that must move (an entry displaced)
     * waits for the dump with its own lock held, which the flush must have taken first. */
    __atomic_store_n(&hp_cache_flushing, 1, __ATOMIC_SEQ_CST);
    struct hp_thread *folded = NULL; /* orphans folded now, by next_free */
    for (struct hp_thread *t = first; t; t = t->next_all) {
        if (t->alive) {
            hp_flush_thread(t);
        } else if (t->orphan) {
            hp_fold_orphan(t);
            t->next_free = folded;
            folded = t;
        }
        hp_olock_release(&t->lock);
    }
    if (folded) { /* caches for the child's next new threads */
        hp_lock(&hp_registry_lock);
        while (folded) {
            struct hp_thread *t = folded;
            folded = t->next_free;
            t->next_free = hp_free_threads;
            hp_free_threads = t;
        }
        hp_unlock(&hp_registry_lock);
    }
}
