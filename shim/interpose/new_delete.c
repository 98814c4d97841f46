/* C++ operator new and delete in all their forms, in C, on the shim's allocation path: new
 * retries through the installed std::new_handler and throws std::bad_alloc when there is none;
 * the nothrow forms return NULL instead. libstdc++'s (or libc++'s) own functions are found at
 * run time, only when an allocation fails. */
#include "core/core.h"
#include "rt/rt.h"

#include <dlfcn.h>
#include <link.h>
#include <stddef.h>

typedef void (*new_handler_t)(void);

static new_handler_t current_handler(void)
{
    static new_handler_t (*get)(void);
    if (!get)
        get = (new_handler_t(*)(void))dlsym(RTLD_DEFAULT, "_ZSt15get_new_handlerv");
    return get ? get() : NULL;
}

__attribute__((noreturn)) static void throw_bad_alloc(void)
{
    void (*thrower)(void) = (void (*)(void))dlsym(RTLD_DEFAULT, "_ZSt17__throw_bad_allocv");
    if (thrower)
        thrower();
    hp_error("operator new: out of memory and no C++ runtime to throw std::bad_alloc");
    __builtin_trap();
}

/* The C++ runtime's own definition of sym: the one in the object that defines
 * std::get_new_handler (libstdc++, libc++) or its dependencies, not the next definition after
 * the shim, which may be a preloaded allocator's (tcmalloc and mimalloc define operator new:
 * mimalloc's nothrow form never calls the new_handler, and a block either one made would carry
 * no header). */
static void *runtime_sym(const char *sym)
{
    void *get = dlsym(RTLD_DEFAULT, "_ZSt15get_new_handlerv");
    struct dl_find_object fo;
    if (!get || _dl_find_object(get, &fo) != 0 || !fo.dlfo_link_map ||
        !fo.dlfo_link_map->l_name || !fo.dlfo_link_map->l_name[0])
        return NULL; /* in no object, or in the program itself (a static C++ runtime) */
    /* A handle for it (the link map itself is not one: a library loaded at start has no
     * search list until dlopen makes one). It stays open: the runtime is never unloaded. */
    void *h = dlopen(fo.dlfo_link_map->l_name, RTLD_LAZY | RTLD_NOLOAD);
    return h ? dlsym(h, sym) : NULL;
}

/* A nothrow new whose first attempt failed: let the C++ runtime's own nothrow operator new
 * retry. It calls the throwing operator new (the shim's) inside a try block, so a new_handler
 * that throws ends in nullptr as the standard says, which C cannot do itself. */
static void *nothrow_retry(size_t size, size_t align)
{
    static void *(*plain)(size_t, const void *);
    static void *(*aligned)(size_t, size_t, const void *);
    static const char tag = 0; /* stands for std::nothrow: the runtime never reads it */
    if (!align) {
        if (!plain)
            plain = (void *(*)(size_t, const void *))runtime_sym("_ZnwmRKSt9nothrow_t");
        return plain ? plain(size, &tag) : (void *)-1;
    }
    if (!aligned)
        aligned = (void *(*)(size_t, size_t, const void *))runtime_sym(
            "_ZnwmSt11align_val_tRKSt9nothrow_t");
    return aligned ? aligned(size, align, &tag) : (void *)-1;
}

static void *new_impl(size_t size, size_t align, int nothrow)
{
    if (align && !hp_is_pow2(align)) {
        if (nothrow)
            return NULL;
        throw_bad_alloc();
    }
    if (nothrow) {
        void *p = hp_alloc(size, align > 16 ? align : 0, 0);
        if (HP_LIKELY(p != NULL))
            return p;
        p = nothrow_retry(size, align > 16 ? align : 0);
        if (p != (void *)-1)
            return p;
        /* No C++ runtime to catch for us: retry through the handler below. */
    }
    for (;;) {
        void *p = hp_alloc(size, align > 16 ? align : 0, 0);
        if (HP_LIKELY(p != NULL))
            return p;
        new_handler_t h = current_handler();
        if (!h) {
            if (nothrow)
                return NULL;
            throw_bad_alloc();
        }
        h();
    }
}

#define NEW(name, args, call) \
    HP_EXPORT HP_HOT void *name args { return call; }
#define DELETE(name, args) \
    HP_EXPORT HP_HOT void name args { hp_free(p); }

typedef struct nothrow_t nothrow_t;

NEW(_Znwm, (size_t n), new_impl(n, 0, 0))
NEW(_Znam, (size_t n), new_impl(n, 0, 0))
NEW(_ZnwmRKSt9nothrow_t, (size_t n, const nothrow_t *t), ((void)t, new_impl(n, 0, 1)))
NEW(_ZnamRKSt9nothrow_t, (size_t n, const nothrow_t *t), ((void)t, new_impl(n, 0, 1)))
NEW(_ZnwmSt11align_val_t, (size_t n, size_t a), new_impl(n, a, 0))
NEW(_ZnamSt11align_val_t, (size_t n, size_t a), new_impl(n, a, 0))
NEW(_ZnwmSt11align_val_tRKSt9nothrow_t, (size_t n, size_t a, const nothrow_t *t), ((void)t, new_impl(n, a, 1)))
NEW(_ZnamSt11align_val_tRKSt9nothrow_t, (size_t n, size_t a, const nothrow_t *t), ((void)t, new_impl(n, a, 1)))

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
