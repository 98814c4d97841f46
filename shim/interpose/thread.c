/* pthread_create, interposed to tell the profiler that the process is about to have a second
 * thread before that thread can allocate (its counters switch to atomic updates), and to grow
 * the descriptor table while the process has one thread (hp_fd_table_grow). */
#include "profile/profile.h"
#include "backend/backend.h"
#include "rt/rt.h"

#include <pthread.h>

typedef int (*create_fn)(pthread_t *, const pthread_attr_t *, void *(*)(void *), void *);

HP_EXPORT int pthread_create(pthread_t *th, const pthread_attr_t *attr, void *(*fn)(void *), void *arg)
{
    static void *real;
    create_fn next = (create_fn)hp_next_sym(&real, "pthread_create");
    hp_note_threads();
    hp_fd_table_grow();
    return next(th, attr, fn, arg);
}
