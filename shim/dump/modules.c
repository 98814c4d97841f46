/* The module list of a dump: one MODULE record per image mapped (from the memory map, with
 * its load bias and GNU build id read from the ELF image in memory), then the libraries closed
 * with dlclose since (retired.c). */
#include "dump/dump_internal.h"
#include "dump/dump.h"
#include "unwind/unwind.h"

#include <elf.h>

/* The MODULE records of the provisional profile: under a seccomp filter /proc cannot be read,
 * and the exit profile repeats them. */
static char saved_modules[256 << 10];
static size_t saved_modules_len;
static uint64_t saved_modules_records;
static int saved_modules_ok;

struct module_acc {
    struct writer *w;
    char path[1024];
    int nsegs, has_exec;
    struct hpf_segment segs[64];
};

/* The run-time address of n bytes at file offset off, if the module maps them readable. */
static uint64_t offset_addr(const struct hpf_segment *segs, int nsegs, uint64_t off, uint64_t n)
{
    for (int i = 0; i < nsegs; i++) {
        const struct hpf_segment *g = &segs[i];
        if ((g->prot & 1) && off >= g->offset && off - g->offset + n <= g->end - g->start)
            return g->start + (off - g->offset);
    }
    return 0;
}

/* Load bias and GNU build id from the ELF image in memory. The program headers are found by
 * their file offset: usually in the first page, but a binary rewritten by BOLT (the Rust
 * toolchain's librustc_driver) has them in a segment of their own at the end. */
void hp_module_elf_info(const struct hpf_segment *segs, int nsegs, uint64_t *bias, uint8_t *id,
                        uint32_t *idlen)
{
    *bias = 0;
    *idlen = 0;
    uint64_t ehdr = offset_addr(segs, nsegs, 0, sizeof(Elf64_Ehdr));
    if (!ehdr)
        return;
    const Elf64_Ehdr *eh = (const Elf64_Ehdr *)ehdr;
    if (hp_memcmp(eh->e_ident, ELFMAG, SELFMAG) != 0 || eh->e_ident[EI_CLASS] != ELFCLASS64)
        return;
    uint64_t ph = offset_addr(segs, nsegs, eh->e_phoff, (uint64_t)eh->e_phnum * sizeof(Elf64_Phdr));
    if (!ph)
        return;
    const Elf64_Phdr *p = (const Elf64_Phdr *)ph;
    for (int i = 0; i < eh->e_phnum; i++)
        if (p[i].p_type == PT_LOAD) {
            uint64_t at = offset_addr(segs, nsegs, p[i].p_offset & ~(uint64_t)4095, 1);
            if (!at)
                return;
            *bias = at - (p[i].p_vaddr & ~(uint64_t)4095);
            break;
        }
    for (int i = 0; i < eh->e_phnum; i++) {
        if (p[i].p_type != PT_NOTE)
            continue;
        uint64_t a = offset_addr(segs, nsegs, p[i].p_offset, p[i].p_filesz), end = a + p[i].p_filesz;
        if (!a)
            continue;
        while (a + sizeof(Elf64_Nhdr) <= end) {
            const Elf64_Nhdr *nh = (const Elf64_Nhdr *)a;
            uint64_t name = a + sizeof *nh;
            uint64_t desc = name + ((nh->n_namesz + 3) & ~3u);
            uint64_t next = desc + ((nh->n_descsz + 3) & ~3u);
            if (next > end)
                break;
            if (nh->n_type == NT_GNU_BUILD_ID && nh->n_namesz == 4 &&
                !hp_memcmp((const void *)name, "GNU", 4) && nh->n_descsz <= 64) {
                hp_memcpy(id, (const void *)desc, nh->n_descsz);
                *idlen = nh->n_descsz;
                return;
            }
            a = next;
        }
    }
}

static void write_module(struct writer *w, uint64_t bias, const struct hpf_segment *segs, uint32_t nsegs,
                         const uint8_t *id, uint32_t idlen, const char *path)
{
    size_t plen = hp_strlen(path);
    uint64_t size = sizeof(struct hpf_module) + (uint64_t)nsegs * sizeof(struct hpf_segment) +
                    ((idlen + 3) & ~3u) + hp_str_size(plen);
    hp_w_record(w, HPF_REC_MODULE, 0, size);
    struct hpf_module mod = {bias, nsegs, idlen};
    hp_w_bytes(w, &mod, sizeof mod);
    hp_w_bytes(w, segs, (size_t)nsegs * sizeof(struct hpf_segment));
    hp_w_bytes(w, id, idlen);
    hp_w_pad(w, idlen, 4);
    hp_w_string(w, path, plen);
    hp_w_pad(w, size, 8);
}

static void emit_module(struct module_acc *m)
{
    if (!m->nsegs || !m->has_exec) {
        m->nsegs = 0;
        return;
    }
    uint8_t id[64];
    uint32_t idlen = 0;
    uint64_t bias = 0;
    if (m->path[0] == '/')
        hp_module_elf_info(m->segs, m->nsegs, &bias, id, &idlen);
    write_module(m->w, bias, m->segs, (uint32_t)m->nsegs, id, idlen, m->path);
    m->nsegs = 0;
}

/* One module per loaded image: the mappings of one file, with anonymous ones (its .bss, a
 * gap before a segment aligned to 2 MiB) skipped between them; a mapping of the file at
 * offset 0 begins another image of it. */
static int module_line(const struct hp_mapping *mp, void *arg)
{
    struct module_acc *m = arg;
    int named = mp->path[0] == '/' || !hp_strcmp(mp->path, "[vdso]");
    if (!named && !mp->path[0])
        return 0;
    if (m->nsegs && (hp_strcmp(m->path, mp->path) != 0 || m->nsegs == 64 || mp->offset == 0))
        emit_module(m);
    if (!named)
        return 0;
    if (!m->nsegs) {
        hp_strlcpy(m->path, mp->path, sizeof m->path);
        m->has_exec = 0;
    }
    struct hpf_segment *s = &m->segs[m->nsegs++];
    s->start = mp->start;
    s->end = mp->end;
    s->offset = mp->offset;
    s->prot = mp->prot;
    s->pad = 0;
    if (mp->prot & 4)
        m->has_exec = 1;
    return 0;
}

static struct module_acc macc;

/* Libraries closed since start whose code is not mapped any more (retired.c). The maps table
 * was refreshed at the start of this dump. */
static void write_retired(struct writer *w)
{
    for (const struct hp_retired *r = hp_retired_list(); r; r = r->next) {
        int mapped = 0;
        for (uint32_t i = 0; i < r->nsegs && !mapped; i++)
            mapped = hp_is_exec_mapping(r->segs[i].start) || hp_is_exec_mapping(r->segs[i].end - 1);
        if (!mapped)
            write_module(w, r->bias, r->segs, r->nsegs, r->build_id, r->build_id_len, r->path);
    }
}

void hp_write_modules(struct writer *w, int save)
{
    macc.w = w;
    macc.nsegs = 0;
    if (hp_sandboxed) {
        if (saved_modules_ok) {
            hp_w_bytes(w, saved_modules, saved_modules_len);
            w->records += saved_modules_records;
        }
    } else {
        uint64_t before = w->records;
        if (save) {
            w->tee = saved_modules;
            w->tee_len = 0;
            w->tee_cap = sizeof saved_modules;
        }
        hp_maps_foreach(module_line, &macc);
        emit_module(&macc);
        if (save) {
            saved_modules_ok = w->tee_len <= w->tee_cap;
            saved_modules_len = w->tee_len;
            saved_modules_records = w->records - before;
            w->tee = NULL;
        }
    }
    write_retired(w);
}
