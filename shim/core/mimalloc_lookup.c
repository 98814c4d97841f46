/* Finding mimalloc's own functions (dlsym(RTLD_NEXT), or its original code when it is patched
 * in front of the shim), and the code whose calls of them are mimalloc's own business. */
#include "core/mimalloc_internal.h"
#include "backend/backend.h"

#include <link.h>

struct hp_mi_real hp_mi_real;
int hp_mi_found, hp_mi_heap_here, hp_mi_reallocarr_next;
uintptr_t hp_mi_lo, hp_mi_hi, hp_mi_self_lo, hp_mi_self_hi;

static void object_range(const void *fn, uintptr_t *lo, uintptr_t *hi)
{
    struct dl_find_object fo;
    if (fn && _dl_find_object((void *)fn, &fo) == 0) {
        *lo = (uintptr_t)fo.dlfo_map_start;
        *hi = (uintptr_t)fo.dlfo_map_end;
    }
}

static void resolve(void)
{
    const void *where = NULL;
    if (!hp_backend_next("mi_malloc", &where))
        return;
    object_range(where, &hp_mi_lo, &hp_mi_hi);
    object_range((const void *)resolve, &hp_mi_self_lo, &hp_mi_self_hi);
#define X(name, ret, params) *(void **)&hp_mi_real.name = hp_backend_next(#name, NULL);
    MI_FUNCS(X)
#undef X
    const void *ra = NULL;
    hp_backend_next("reallocarr", &ra);
    hp_mi_reallocarr_next = ra && (uintptr_t)ra - hp_mi_lo < hp_mi_hi - hp_mi_lo;
    hp_backend_next("mi_heap_malloc", &where);
    hp_mi_heap_here = where && hp_be.base && hp_object_start(where) == hp_be.base &&
                      hp_mi_real.mi_heap_malloc && hp_mi_real.mi_heap_zalloc;
    /* With mimalloc in the process, blocks it made itself (mimalloc_internal.h) reach free() too. */
    __atomic_store_n(&hp_foreign_expected, 1, __ATOMIC_RELAXED);
    __atomic_store_n(&hp_mi_found, 1, __ATOMIC_RELEASE);
}

void hp_mi_init(void) { resolve(); }

void hp_mi_retry(void)
{
    if (__atomic_load_n(&hp_init_state, __ATOMIC_ACQUIRE) == HP_INIT_DONE)
        resolve();
}
