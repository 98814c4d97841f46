/* Symbols of loaded objects, read from their images (patch_internal.h): an object's dynamic
 * symbol table and its hash lookups, what a call of a name reaches in the loader's lookup
 * order, and where a PLT entry of a non-PIE program really leads. */
#include "patch_internal.h"
#include "rt/rt.h"

#include <dlfcn.h>
#include <elf.h>
#include <link.h>
#include <stdint.h>

#if defined(__x86_64__)

/* The slot a PLT entry at addr jumps through (jmp *slot(%rip), after endbr64 and a bnd
 * prefix), or NULL when addr is no such entry. dladdr names an entry after the function it
 * stands for, so only its code tells. */
static void *const *plt_slot(const void *addr)
{
    const uint8_t *p = addr;
    if (p[0] == 0xf3 && p[1] == 0x0f && p[2] == 0x1e && p[3] == 0xfa)
        p += 4;
    if (p[0] == 0xf2)
        p++;
    if (p[0] != 0xff || p[1] != 0x25)
        return NULL;
    int32_t d;
    hp_memcpy(&d, p + 2, 4);
    return (void *const *)(p + 6 + d);
}

/* Where a call of the function at addr really goes. A program built without -fPIE that takes
 * the address of malloc has a PLT entry that stands for malloc everywhere (dlsym answers it),
 * while the code is elsewhere: follow the entry's jump through its GOT slot. */
void *hp_patch_resolve(void *addr)
{
    void *const *slot;
    for (int hop = 0; addr && hop < 2 && (slot = plt_slot(addr)) != NULL; hop++)
        addr = *slot;
    return addr;
}


struct def_search {
    const char *name;
    void *fn;
};


int hp_dynsyms_of(const struct dl_phdr_info *info, struct hp_dynsyms *d)
{
    hp_memset(d, 0, sizeof *d);
    d->bias = info->dlpi_addr;
    const ElfW(Dyn) *dyn = NULL;
    for (ElfW(Half) i = 0; i < info->dlpi_phnum; i++)
        if (info->dlpi_phdr[i].p_type == PT_DYNAMIC)
            dyn = (const ElfW(Dyn) *)(info->dlpi_addr + info->dlpi_phdr[i].p_vaddr);
    if (!dyn)
        return -1;
    for (; dyn->d_tag != DT_NULL; dyn++) {
        /* glibc adds the load bias to these entries where the dynamic section is writable
         * (x86_64): a value below the bias has not had it added. */
        uintptr_t v = dyn->d_un.d_ptr;
        if (v < d->bias)
            v += d->bias;
        switch (dyn->d_tag) {
        case DT_SYMTAB: d->sym = (const ElfW(Sym) *)v; break;
        case DT_STRTAB: d->str = (const char *)v; break;
        case DT_GNU_HASH: d->gnu = (const uint32_t *)v; break;
        case DT_HASH: d->sysv = (const ElfW(Word) *)v; break;
        case DT_VERSYM: d->ver = (const ElfW(Half) *)v; break;
        default: break;
        }
    }
    return d->sym && d->str && (d->gnu || d->sysv) ? 0 : -1;
}

/* Symbol i names a function defined in the object, in its default version? */
static int dynsym_is(const struct hp_dynsyms *d, uint32_t i, const char *name)
{
    const ElfW(Sym) *y = &d->sym[i];
    return y->st_shndx != SHN_UNDEF && ELF64_ST_TYPE(y->st_info) == STT_FUNC &&
           !(d->ver && (d->ver[i] & 0x8000) && !d->hidden_ok) && !hp_strcmp(d->str + y->st_name, name);
}

/* The address of the function `name` the object defines, or NULL. */
void *hp_dynsym_find(const struct hp_dynsyms *d, const char *name)
{
    if (d->gnu) {
        uint32_t nb = d->gnu[0], first = d->gnu[1], bloom_words = d->gnu[2];
        if (nb == 0)
            return NULL;
        const uint32_t *buckets = (const uint32_t *)((const ElfW(Addr) *)(d->gnu + 4) + bloom_words);
        const uint32_t *chain = buckets + nb;
        uint32_t h = 5381;
        for (const unsigned char *c = (const unsigned char *)name; *c; c++)
            h = h * 33 + *c;
        uint32_t i = buckets[h % nb];
        if (i < first)
            return NULL;
        for (;; i++) {
            uint32_t ch = chain[i - first];
            if ((ch | 1) == (h | 1) && dynsym_is(d, i, name))
                return (void *)(d->bias + d->sym[i].st_value);
            if (ch & 1)
                return NULL;
        }
    }
    uint32_t nb = d->sysv[0];
    if (nb == 0)
        return NULL;
    const ElfW(Word) *buckets = d->sysv + 2, *chain = buckets + nb;
    uint32_t h = 0;
    for (const unsigned char *c = (const unsigned char *)name; *c; c++) {
        h = (h << 4) + *c;
        h ^= (h >> 24) & 0xf0;
    }
    h &= 0x0fffffff;
    for (uint32_t i = buckets[h % nb]; i; i = chain[i])
        if (dynsym_is(d, i, name))
            return (void *)(d->bias + d->sym[i].st_value);
    return NULL;
}

static int find_definition(struct dl_phdr_info *info, size_t size, void *arg)
{
    (void)size;
    struct def_search *d = arg;
    if (!info->dlpi_name || !info->dlpi_name[0])
        return 0; /* the main program (its entry for the name is the PLT one) or the vdso */
    struct hp_dynsyms ds;
    void *fn = NULL;
    if (hp_dynsyms_of(info, &ds) == 0) {
        /* Programs ask for name@GLIBC_2.2.5, which a hidden definition of that version also
         * satisfies (glibc's libc_malloc_debug.so defines its malloc that way). */
        ds.hidden_ok = 1;
        fn = hp_dynsym_find(&ds, d->name);
    }
    if (!fn)
        return 0;
    d->fn = fn;
    return 1;
}

struct order_search {
    const void *a, *b; /* object starts */
    int first;         /* 1: a's object comes first, 2: b's, 0: neither found yet */
};

static int find_order(struct dl_phdr_info *info, size_t size, void *arg)
{
    (void)size;
    struct order_search *o = arg;
    for (ElfW(Half) i = 0; i < info->dlpi_phnum; i++) {
        const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
        if (ph->p_type != PT_LOAD)
            continue;
        uintptr_t lo = info->dlpi_addr + ph->p_vaddr, hi = lo + ph->p_memsz;
        if ((uintptr_t)o->a >= lo && (uintptr_t)o->a < hi)
            o->first = 1;
        else if ((uintptr_t)o->b >= lo && (uintptr_t)o->b < hi)
            o->first = 2;
        if (o->first)
            return 1;
    }
    return 0;
}

/* The function a call of `name` from a library reaches: what dlsym answers, unless that is a
 * PLT entry of the main program standing for the function (see hp_patch_resolve), or an
 * object that comes earlier in lookup order has a hidden definition of it: dlsym passes those
 * by, but a program's reference, which asks for glibc's version (malloc@GLIBC_2.2.5), reaches
 * one of that version (glibc's libc_malloc_debug.so defines its malloc that way). Then the
 * first object in lookup order that defines it. A PLT slot may not be bound yet (lazy
 * binding), so it is read only when no object says. */
static void *definition_of(const char *name)
{
    void *fn = dlsym(RTLD_DEFAULT, name);
    struct def_search d = {name, NULL};
    dl_iterate_phdr(find_definition, &d); /* the main program is left out */
    if (fn && plt_slot(fn))
        return d.fn ? d.fn : hp_patch_resolve(fn);
    if (!fn)
        return d.fn;
    if (d.fn && d.fn != fn) {
        struct order_search o = {d.fn, fn, 0};
        if (dl_iterate_phdr(find_order, &o) && o.first == 1)
            return d.fn;
    }
    return fn;
}

void *hp_bound_symbol(const char *name) { return definition_of(name); }

static int find_any(struct dl_phdr_info *info, size_t size, void *arg)
{
    (void)size;
    struct def_search *d = arg;
    struct hp_dynsyms ds;
    if (hp_dynsyms_of(info, &ds) == 0)
        d->fn = hp_dynsym_find(&ds, d->name);
    return d->fn != NULL;
}

void *hp_defined_function(const char *name)
{
    struct def_search d = {name, NULL};
    dl_iterate_phdr(find_any, &d);
    return d.fn;
}

#else

void *hp_defined_function(const char *name) { return dlsym(RTLD_DEFAULT, name); }

void *hp_patch_resolve(void *addr) { return addr; }

void *hp_bound_symbol(const char *name) { return dlsym(RTLD_DEFAULT, name); }

#endif
