/* The module list of a dump: one MODULE record per image mapped (from the memory map, with
 * its load bias and GNU build id read from the ELF image in memory), then the libraries closed
 * with dlclose since (retired.c). */
#include "dump/dump_internal.h"
#include "dump/dump.h"
#include "unwind/unwind.h"

#include <elf.h>
#include <errno.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <unistd.h>

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

/* Copy n bytes of the process's memory at addr into buf: 0, or -1 when they are not all
 * readable. Through the kernel (process_vm_readv on itself) rather than by loads: a mapping in
 * the memory map need not be the program's to read. Under valgrind the tool's own image (at
 * 0x58000000) is listed like a library, and memcheck reports every load from it; the kernel's
 * copy is neither a load of the program's nor a fault when a page has gone. Where the call is
 * refused (ENOSYS, EPERM), the bytes are read directly, as they were before it. */
static int peek(uint64_t addr, void *buf, size_t n)
{
    struct iovec local = {buf, n}, remote = {(void *)(uintptr_t)addr, n};
    int saved = errno;
    long r = syscall(SYS_process_vm_readv, (long)syscall(SYS_getpid), &local, 1L, &remote, 1L, 0L);
    int err = errno;
    errno = saved;
    if (r == (long)n)
        return 0;
    if (r < 0 && (err == ENOSYS || err == EPERM)) {
        hp_memcpy(buf, (const void *)(uintptr_t)addr, n);
        return 0;
    }
    return -1;
}

#define MAX_PHDRS 64
#define MAX_NOTES 2048 /* bytes of one PT_NOTE segment looked through */

/* Load bias and GNU build id from the ELF image in memory. The program headers are found by
 * their file offset: usually in the first page, but a binary rewritten by BOLT (the Rust
 * toolchain's librustc_driver) has them in a segment of their own at the end. */
void hp_module_elf_info(const struct hpf_segment *segs, int nsegs, uint64_t *bias, uint8_t *id,
                        uint32_t *idlen)
{
    *bias = 0;
    *idlen = 0;
    Elf64_Ehdr eh;
    uint64_t ehdr = offset_addr(segs, nsegs, 0, sizeof eh);
    if (!ehdr || peek(ehdr, &eh, sizeof eh) != 0)
        return;
    if (hp_memcmp(eh.e_ident, ELFMAG, SELFMAG) != 0 || eh.e_ident[EI_CLASS] != ELFCLASS64)
        return;
    static Elf64_Phdr p[MAX_PHDRS]; /* dumps are serialised (dump.c) */
    int phnum = eh.e_phnum < MAX_PHDRS ? eh.e_phnum : MAX_PHDRS;
    uint64_t ph = offset_addr(segs, nsegs, eh.e_phoff, (uint64_t)phnum * sizeof(Elf64_Phdr));
    if (!ph || peek(ph, p, (size_t)phnum * sizeof(Elf64_Phdr)) != 0)
        return;
    for (int i = 0; i < phnum; i++)
        if (p[i].p_type == PT_LOAD) {
            uint64_t at = offset_addr(segs, nsegs, p[i].p_offset & ~(uint64_t)4095, 1);
            if (!at)
                return;
            *bias = at - (p[i].p_vaddr & ~(uint64_t)4095);
            break;
        }
    static uint8_t notes[MAX_NOTES];
    for (int i = 0; i < phnum; i++) {
        if (p[i].p_type != PT_NOTE)
            continue;
        uint64_t len = p[i].p_filesz < MAX_NOTES ? p[i].p_filesz : MAX_NOTES;
        uint64_t at = offset_addr(segs, nsegs, p[i].p_offset, len);
        if (!at || peek(at, notes, (size_t)len) != 0)
            continue;
        uint64_t a = 0;
        while (a + sizeof(Elf64_Nhdr) <= len) {
            Elf64_Nhdr nh;
            hp_memcpy(&nh, notes + a, sizeof nh);
            uint64_t name = a + sizeof nh;
            uint64_t desc = name + ((nh.n_namesz + 3) & ~3u);
            uint64_t next = desc + ((nh.n_descsz + 3) & ~3u);
            if (next > len)
                break;
            if (nh.n_type == NT_GNU_BUILD_ID && nh.n_namesz == 4 && !hp_memcmp(notes + name, "GNU", 4) &&
                nh.n_descsz <= 64) {
                hp_memcpy(id, notes + desc, nh.n_descsz);
                *idlen = nh.n_descsz;
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
