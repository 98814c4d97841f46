/* Libraries closed with dlclose: their code addresses stay in recorded stacks, so each closing
 * library's name, load bias, build id and executable segments are noted first, and later dumps
 * write the notes no longer mapped as MODULE records (modules.c; test unload). */
#include "profile/profile.h"
#include "dump/dump.h"
#include "dump_internal.h"
#include "rt/rt.h"

#include <dlfcn.h>
#include <elf.h>
#include <link.h>
#include <string.h>

static struct hp_retired *retired; /* newest first, never freed */
static hp_lock_t retired_lock = HP_LOCK_INIT;

struct find {
    uintptr_t bias;
    const char *name;
    struct hp_retired r;
    int found;
};

static int note_object(struct dl_phdr_info *info, size_t size, void *arg)
{
    (void)size;
    struct find *f = arg;
    if (info->dlpi_addr != f->bias || !info->dlpi_name || hp_strcmp(info->dlpi_name, f->name) != 0)
        return 0;
    struct hp_retired *r = &f->r;
    for (int i = 0; i < info->dlpi_phnum && r->nsegs < HP_RETIRED_SEGS; i++) {
        const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
        if (ph->p_type == PT_LOAD && (ph->p_flags & PF_X)) {
            r->segs[r->nsegs].start = info->dlpi_addr + ph->p_vaddr;
            r->segs[r->nsegs].end = info->dlpi_addr + ph->p_vaddr + ph->p_memsz;
            r->segs[r->nsegs].offset = ph->p_offset;
            r->segs[r->nsegs].prot = 5;
            r->nsegs++;
        } else if (ph->p_type == PT_NOTE && !r->build_id_len) {
            const char *p = (const char *)(info->dlpi_addr + ph->p_vaddr), *end = p + ph->p_filesz;
            while (p + sizeof(ElfW(Nhdr)) <= end) {
                const ElfW(Nhdr) *nh = (const ElfW(Nhdr) *)p;
                const char *desc = p + sizeof *nh + ((nh->n_namesz + 3) & ~3u);
                const char *next = desc + ((nh->n_descsz + 3) & ~3u);
                if (next > end)
                    break;
                if (nh->n_type == NT_GNU_BUILD_ID && nh->n_namesz == 4 && !hp_memcmp(p + sizeof *nh, "GNU", 4) &&
                    nh->n_descsz <= sizeof r->build_id) {
                    hp_memcpy(r->build_id, desc, nh->n_descsz);
                    r->build_id_len = nh->n_descsz;
                }
                p = next;
            }
        }
    }
    f->found = 1;
    return 1;
}

/* The path /proc/self/maps gives the file mapped at an address: absolute, as for the modules
 * still mapped at a dump, even when the program opened the library by a relative path. */
struct mapped_path {
    uintptr_t addr;
    char *path;
    size_t size;
};

static int find_path(const struct hp_mapping *m, void *arg)
{
    struct mapped_path *mp = arg;
    if (mp->addr < m->start || mp->addr >= m->end || m->path[0] != '/')
        return 0;
    hp_strlcpy(mp->path, m->path, mp->size);
    return 1;
}

void hp_retire_note(void *handle)
{
    struct link_map *lm = NULL;
    if (!hp_profiling || !handle || dlinfo(handle, RTLD_DI_LINKMAP, &lm) != 0 || !lm || !lm->l_name ||
        !lm->l_name[0])
        return;
    struct find f;
    hp_memset(&f, 0, sizeof f);
    f.bias = lm->l_addr;
    f.name = lm->l_name;
    dl_iterate_phdr(note_object, &f);
    if (!f.found || !f.r.nsegs)
        return;
    f.r.bias = lm->l_addr;
    struct mapped_path mp = {(uintptr_t)f.r.segs[0].start, f.r.path, sizeof f.r.path};
    f.r.path[0] = 0;
    hp_maps_foreach(find_path, &mp);
    if (!f.r.path[0]) {
        if (lm->l_name[0] != '/')
            return; /* a path relative to a directory we may no longer know */
        hp_strlcpy(f.r.path, lm->l_name, sizeof f.r.path);
    }
    hp_lock(&retired_lock);
    for (struct hp_retired *o = retired; o; o = o->next)
        if (o->bias == f.r.bias && !hp_strcmp(o->path, f.r.path)) {
            hp_unlock(&retired_lock);
            return; /* opened and closed again at the same place */
        }
    struct hp_retired *r = hp_meta_alloc(sizeof *r);
    if (r) {
        hp_memcpy(r, &f.r, sizeof *r);
        r->next = retired;
        __atomic_store_n(&retired, r, __ATOMIC_RELEASE);
    }
    hp_unlock(&retired_lock);
}

const struct hp_retired *hp_retired_list(void) { return __atomic_load_n(&retired, __ATOMIC_ACQUIRE); }

void hp_retired_fork_child(void) { hp_lock_reset(&retired_lock); }
