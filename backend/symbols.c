/* Symbol and object lookups for the rest of the shim (backend.h): the next definition of a
 * function the shim wraps, the first definition in the process, the C++ runtime's own
 * functions, and where the object holding an address starts. */
#include "backend/backend.h"

#include <dlfcn.h>
#include <link.h>
#include <stdint.h>

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

struct span_search {
    uintptr_t addr;
    uintptr_t start;
};

static int find_span(struct dl_phdr_info *info, size_t size, void *arg)
{
    (void)size;
    struct span_search *s = arg;
    int here = 0;
    uintptr_t lo = UINTPTR_MAX;
    for (ElfW(Half) i = 0; i < info->dlpi_phnum; i++) {
        const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
        if (ph->p_type != PT_LOAD)
            continue;
        uintptr_t a = info->dlpi_addr + ph->p_vaddr;
        if (s->addr - a < ph->p_memsz)
            here = 1;
        if (a < lo)
            lo = a;
    }
    if (!here)
        return 0;
    s->start = lo & ~(uintptr_t)4095;
    return 1;
}

/* The start of the object's first segment, as dladdr's dli_fbase (without dladdr's search of
 * the object's symbols, about 90,000 instructions a call in libc). Not _dl_find_object's
 * dlfo_map_start: for an object whose segments are not contiguous (the main program linked
 * with -z max-page-size=0x200000, or Chromium's, with a gap after its first segment) that is
 * the start of the segment holding addr, and objects compared by it would differ. */
const void *hp_object_start(const void *addr)
{
    struct span_search s = {(uintptr_t)addr, 0};
    if (!addr || !dl_iterate_phdr(find_span, &s))
        return NULL;
    return (const void *)s.start;
}
