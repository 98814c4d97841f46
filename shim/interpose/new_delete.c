/* C++ operator new and delete in all their forms, in C: new forwards to core/new.c (the
 * new_handler loop, std::bad_alloc, the nothrow forms), delete to the shim's free. */
#include "core/core.h"
#include "rt/rt.h"

#include <stddef.h>

#define NEW(name, args, call) \
    HP_EXPORT HP_HOT void *name args { return call; }
#define DELETE(name, args) \
    HP_EXPORT HP_HOT void name args { hp_free(p); }

typedef struct nothrow_t nothrow_t;

NEW(_Znwm, (size_t n), hp_new(n, 0, 0))
NEW(_Znam, (size_t n), hp_new(n, 0, 0))
NEW(_ZnwmRKSt9nothrow_t, (size_t n, const nothrow_t *t), ((void)t, hp_new(n, 0, 1)))
NEW(_ZnamRKSt9nothrow_t, (size_t n, const nothrow_t *t), ((void)t, hp_new(n, 0, 1)))
NEW(_ZnwmSt11align_val_t, (size_t n, size_t a), hp_new(n, a, 0))
NEW(_ZnamSt11align_val_t, (size_t n, size_t a), hp_new(n, a, 0))
NEW(_ZnwmSt11align_val_tRKSt9nothrow_t, (size_t n, size_t a, const nothrow_t *t), ((void)t, hp_new(n, a, 1)))
NEW(_ZnamSt11align_val_tRKSt9nothrow_t, (size_t n, size_t a, const nothrow_t *t), ((void)t, hp_new(n, a, 1)))

DELETE(_ZdlPv, (void *p))
DELETE(_ZdaPv, (void *p))
DELETE(_ZdlPvm, (void *p, size_t n))
DELETE(_ZdaPvm, (void *p, size_t n))
DELETE(_ZdlPvRKSt9nothrow_t, (void *p, const nothrow_t *t))
DELETE(_ZdaPvRKSt9nothrow_t, (void *p, const nothrow_t *t))
DELETE(_ZdlPvSt11align_val_t, (void *p, size_t a))
DELETE(_ZdaPvSt11align_val_t, (void *p, size_t a))
DELETE(_ZdlPvmSt11align_val_t, (void *p, size_t n, size_t a))
DELETE(_ZdaPvmSt11align_val_t, (void *p, size_t n, size_t a))
DELETE(_ZdlPvSt11align_val_tRKSt9nothrow_t, (void *p, size_t a, const nothrow_t *t))
DELETE(_ZdaPvSt11align_val_tRKSt9nothrow_t, (void *p, size_t a, const nothrow_t *t))
