/* Symbol lookups for the rest of the shim (backend.h): the next definition of a function the
 * shim wraps, the first definition in the process, and the C++ runtime's own functions. */
#include "backend/backend.h"

#include <dlfcn.h>
#include <link.h>

void *hp_next_sym(void **slot, const char *name)
{
    void *f = __atomic_load_n(slot, __ATOMIC_ACQUIRE);
    if (!f) {
        f = dlsym(RTLD_NEXT, name);
        __atomic_store_n(slot, f, __ATOMIC_RELEASE);
    }
    return f;
}

void *hp_global_sym(const char *name) { return dlsym(RTLD_DEFAULT, name); }

/* The runtime's own definition, not the next definition after the shim, which may be a
 * preloaded allocator's (tcmalloc and mimalloc define operator new: mimalloc's nothrow form
 * never calls the new_handler, and a block either one made would carry no header). */
void *hp_cxx_runtime_sym(const char *sym)
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
