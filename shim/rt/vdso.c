/* Symbols of the kernel's vDSO (rt.h: hp_vdso_sym), found without the dynamic loader. */
#include "rt/rt.h"

#include <elf.h>
#include <link.h>
#include <sys/auxv.h>

/* The vDSO is a small complete ELF object in memory: its dynamic section names the symbol and
 * string tables, and its SysV hash table (which the kernel always builds) the symbol count.
 * Every address read is checked against the extent of its loadable segments. */
void *hp_vdso_sym(const char *name)
{
    uintptr_t base = (uintptr_t)getauxval(AT_SYSINFO_EHDR);
    if (!base)
        return NULL;
    const ElfW(Ehdr) *eh = (const ElfW(Ehdr) *)base;
    const unsigned char native_class = __ELF_NATIVE_CLASS == 64 ? ELFCLASS64 : ELFCLASS32;
    if (hp_memcmp(eh->e_ident, ELFMAG, SELFMAG) != 0 || eh->e_ident[EI_CLASS] != native_class ||
        eh->e_phentsize != sizeof(ElfW(Phdr)))
        return NULL;
    const ElfW(Phdr) *ph = (const ElfW(Phdr) *)(base + eh->e_phoff);
    uintptr_t bias = 0, end = 0;
    const ElfW(Dyn) *dyn = NULL;
    int have_load = 0;
    for (int i = 0; i < eh->e_phnum; i++) {
        if (ph[i].p_type == PT_LOAD && !have_load) {
            bias = base + ph[i].p_offset - ph[i].p_vaddr;
            end = base + ph[i].p_offset + ph[i].p_memsz;
            have_load = 1;
        } else if (ph[i].p_type == PT_DYNAMIC) {
            dyn = (const ElfW(Dyn) *)(base + ph[i].p_offset);
        }
    }
    if (!have_load || !dyn)
        return NULL;
#define HP_IN_VDSO(p, n) ((uintptr_t)(p) >= base && (uintptr_t)(p) + (n) <= end)
    const ElfW(Sym) *sym = NULL;
    const char *str = NULL;
    const uint32_t *hash = NULL;
    for (; HP_IN_VDSO(dyn, sizeof *dyn) && dyn->d_tag != DT_NULL; dyn++) {
        if (dyn->d_tag == DT_SYMTAB)
            sym = (const ElfW(Sym) *)(bias + dyn->d_un.d_ptr);
        else if (dyn->d_tag == DT_STRTAB)
            str = (const char *)(bias + dyn->d_un.d_ptr);
        else if (dyn->d_tag == DT_HASH)
            hash = (const uint32_t *)(bias + dyn->d_un.d_ptr);
    }
    if (!sym || !str || !hash || !HP_IN_VDSO(hash, 8))
        return NULL;
    uint32_t nsyms = hash[1]; /* nchain: one per symbol */
    size_t want = hp_strlen(name) + 1;
    for (uint32_t i = 0; i < nsyms && HP_IN_VDSO(&sym[i], sizeof sym[i]); i++) {
        const char *n = str + sym[i].st_name;
        if (ELF64_ST_TYPE(sym[i].st_info) != STT_FUNC || sym[i].st_shndx == SHN_UNDEF ||
            !HP_IN_VDSO(n, 1))
            continue;
        if ((uintptr_t)n + want <= end && hp_memcmp(n, name, want) == 0) {
            uintptr_t a = bias + sym[i].st_value;
            return HP_IN_VDSO(a, 1) ? (void *)a : NULL;
        }
    }
#undef HP_IN_VDSO
    return NULL;
}
