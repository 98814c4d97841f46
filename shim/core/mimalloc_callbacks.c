/* The program's functions mimalloc calls: heap visitors (mi_heap_visit_blocks), deferred frees
 * and the error handler, run so that their calls of the API still reach the shim. */
#include "core/mimalloc_internal.h"
#include "backend/backend.h"

/* mi_heap_visit_blocks shows the program its blocks: for one of the shim's, where the program's
 * block is and its usable size, not the allocator's block around it. */
struct visit {
    mi_visit_fn *fn;
    void *arg;
};

static bool visit_user(const mi_heap_t *h, const void *area, void *block, size_t size, void *arg)
{
    const struct visit *v = arg;
    void *u = block ? hp_block_in(block, size) : NULL;
    if (u) {
        size_t end = (size_t)((uintptr_t)block + size - (uintptr_t)u);
        size_t usable = hp_usable_size(u);
        block = u;
        size = usable < end ? usable : end;
    }
    /* The program's visitor runs inside mimalloc: with mimalloc patched in front, its calls
     * (mi_usable_size of the block) must come to the shim, not to mimalloc's original code. */
    int st = hp_patch_suspend();
    bool more = v->fn(h, area, block, size, v->arg);
    hp_patch_resume(st);
    return more;
}

bool hp_mi_heap_visit_blocks(const void *ra, const mi_heap_t *h, bool all, mi_visit_fn *fn, void *arg)
{
    ENTRY(mi_heap_visit_blocks, h, all, fn, arg);
    if (!REAL(mi_heap_visit_blocks))
        return false;
    if (!all || !hp_mi_heap_here)
        return hp_mi_real.mi_heap_visit_blocks(h, all, fn, arg);
    struct visit v = {fn, arg};
    return hp_mi_real.mi_heap_visit_blocks(h, all, visit_user, &v);
}

/* The program's functions mimalloc calls from inside an allocation (a deferred free, its
 * error handler): with mimalloc patched in front of the shim, such a call runs while the shim
 * is inside mimalloc's original code, and a free() of the shim's block there would go straight
 * to mimalloc. They run with the patched entry points live again. */
static mi_deferred_fn *prog_deferred;
static void *prog_deferred_arg;
static mi_error_fn *prog_error;
static void *prog_error_arg;

static void deferred_outside(bool force, unsigned long long heartbeat, void *arg)
{
    (void)arg;
    int st = hp_patch_suspend();
    mi_deferred_fn *fn = __atomic_load_n(&prog_deferred, __ATOMIC_ACQUIRE);
    if (fn)
        fn(force, heartbeat, __atomic_load_n(&prog_deferred_arg, __ATOMIC_RELAXED));
    hp_patch_resume(st);
}

static void error_outside(int err, void *arg)
{
    (void)arg;
    int st = hp_patch_suspend();
    mi_error_fn *fn = __atomic_load_n(&prog_error, __ATOMIC_ACQUIRE);
    if (fn)
        fn(err, __atomic_load_n(&prog_error_arg, __ATOMIC_RELAXED));
    hp_patch_resume(st);
}

/* Register the program's function fn: through its wrapper when mimalloc is patched in front. */
#define REGISTER(name, type, slot, slot_arg, wrapper)             \
    void hp_##name(const void *ra, type *fn, void *arg)           \
    {                                                             \
        ENTRY(name, fn, arg);                                     \
        if (!REAL(name))                                          \
            return;                                               \
        if (!hp_be.in_front || !fn) {                             \
            hp_mi_real.name(fn, arg);                             \
            return;                                               \
        }                                                         \
        __atomic_store_n(&slot_arg, arg, __ATOMIC_RELAXED);       \
        __atomic_store_n(&slot, fn, __ATOMIC_RELEASE);            \
        hp_mi_real.name(wrapper, NULL);                           \
    }
REGISTER(mi_register_deferred_free, mi_deferred_fn, prog_deferred, prog_deferred_arg, deferred_outside)
REGISTER(mi_register_error, mi_error_fn, prog_error, prog_error_arg, error_outside)
#undef REGISTER
