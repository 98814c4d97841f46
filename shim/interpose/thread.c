/* pthread_create: a forward into core/process.c, which readies the profiler for a second
 * thread first. */
#include "core/core.h"
#include "rt/rt.h"

#include <pthread.h>

HP_EXPORT int pthread_create(pthread_t *th, const pthread_attr_t *attr, void *(*fn)(void *), void *arg)
{
    return hp_pthread_create(th, attr, fn, arg);
}
