/* C++ operator new on the shim's allocation path, in C: it retries through the installed
 * std::new_handler and throws std::bad_alloc when there is none; the nothrow forms return NULL
 * instead. The C++ runtime's own functions are found at run time (backend's hp_global_sym and
 * hp_cxx_runtime_sym), only when an allocation fails. */
#include "core/core.h"
#include "backend/backend.h"
#include "rt/rt.h"

#include <stddef.h>

typedef void (*new_handler_t)(void);

static new_handler_t current_handler(void)
{
    static new_handler_t (*get)(void);
    if (!get)
        get = (new_handler_t(*)(void))hp_global_sym("_ZSt15get_new_handlerv");
    return get ? get() : NULL;
}

__attribute__((noreturn)) static void throw_bad_alloc(void)
{
    void (*thrower)(void) = (void (*)(void))hp_global_sym("_ZSt17__throw_bad_allocv");
    if (thrower)
        thrower();
    hp_error("operator new: out of memory and no C++ runtime to throw std::bad_alloc");
    __builtin_trap();
}

/* A nothrow new whose first attempt failed: let the C++ runtime's own nothrow operator new
 * retry. It calls the throwing operator new (the shim's) inside a try block, so a new_handler
 * that throws ends in nullptr as the standard says, which C cannot do itself. The runtime's
 * own definition, not the next one after the shim (hp_cxx_runtime_sym says why). */
static void *nothrow_retry(size_t size, size_t align)
{
    static void *(*plain)(size_t, const void *);
    static void *(*aligned)(size_t, size_t, const void *);
    static const char tag = 0; /* stands for std::nothrow: the runtime never reads it */
    if (!align) {
        if (!plain)
            plain = (void *(*)(size_t, const void *))hp_cxx_runtime_sym("_ZnwmRKSt9nothrow_t");
        return plain ? plain(size, &tag) : (void *)-1;
    }
    if (!aligned)
        aligned = (void *(*)(size_t, size_t, const void *))hp_cxx_runtime_sym(
            "_ZnwmSt11align_val_tRKSt9nothrow_t");
    return aligned ? aligned(size, align, &tag) : (void *)-1;
}

HP_HOT void *hp_new(size_t size, size_t align, int nothrow)
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
