/* Test helper: the test binary's own MODULE record (segments and load bias from
 * dl_iterate_phdr, build id from its note, path from /proc/self/exe), so a synthetic profile's
 * stacks can point into the test's own functions and symbolise for real. Included directly. */
#ifndef HT_SELF_MODULE_H
#define HT_SELF_MODULE_H

#include <check.h>
#include <elf.h>
#include <link.h>
#include <string.h>
#include <unistd.h>

#include "format/format.h"

struct self_module {
    uint64_t bias;
    struct hpf_segment segs[16];
    uint32_t nsegs;
    uint8_t build_id[64];
    uint32_t build_id_len;
    char path[4096];
};

static inline void read_build_id(struct self_module *m, const struct dl_phdr_info *info,
                                 const ElfW(Phdr) * ph)
{
    const uint8_t *p = (const uint8_t *)(info->dlpi_addr + ph->p_vaddr);
    const uint8_t *end = p + ph->p_memsz;
    while (p + sizeof(ElfW(Nhdr)) <= end) {
        const ElfW(Nhdr) *n = (const ElfW(Nhdr) *)p;
        const uint8_t *name = p + sizeof *n;
        const uint8_t *desc = name + ((n->n_namesz + 3) & ~3u);
        if (n->n_type == NT_GNU_BUILD_ID && n->n_namesz == 4 && memcmp(name, "GNU", 4) == 0 &&
            n->n_descsz <= sizeof m->build_id) {
            memcpy(m->build_id, desc, n->n_descsz);
            m->build_id_len = n->n_descsz;
        }
        p = desc + ((n->n_descsz + 3) & ~3u);
    }
}

static inline int self_cb(struct dl_phdr_info *info, size_t size, void *arg)
{
    struct self_module *m = arg;
    /* The first object is the executable itself. */
    for (int i = 0; i < info->dlpi_phnum; i++) {
        const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
        if (ph->p_type == PT_LOAD && m->nsegs < 16) {
            uint64_t start = info->dlpi_addr + ph->p_vaddr;
            m->segs[m->nsegs++] = (struct hpf_segment){
                .start = start, .end = start + ph->p_memsz, .offset = ph->p_offset,
                .prot = (ph->p_flags & PF_R ? 1 : 0) | (ph->p_flags & PF_W ? 2 : 0) |
                        (ph->p_flags & PF_X ? 4 : 0)};
        }
        if (ph->p_type == PT_NOTE)
            read_build_id(m, info, ph);
    }
    m->bias = info->dlpi_addr;
    return 1; /* stop after the executable */
}

static inline void self_module(struct self_module *m)
{
    memset(m, 0, sizeof *m);
    dl_iterate_phdr(self_cb, m);
    ssize_t n = readlink("/proc/self/exe", m->path, sizeof m->path - 1);
    ck_assert(n > 0);
    m->path[n] = 0;
    ck_assert_uint_gt(m->nsegs, 0);
}

#endif
