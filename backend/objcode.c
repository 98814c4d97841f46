/* What a loaded object's headers say about its code beyond its segments, for reach.c's walk:
 * where functions start (the search table of .eh_frame_hdr, one entry per FDE) and which data
 * holds its initialisers and finalisers (the dynamic section's arrays and functions). */
#include "patch_internal.h"
#include "rt/rt.h"

#include <elf.h>
#include <link.h>
#include <stdint.h>

#if defined(__x86_64__)

/* The pointer encodings of .eh_frame_hdr that linkers write (GNU ld, gold, lld, mold). */
#define PE_UDATA4 0x03
#define PE_SDATA4 0x0b
#define PE_DATAREL 0x30

static int inside(const struct dl_phdr_info *info, uintptr_t a, size_t n)
{
    for (ElfW(Half) i = 0; i < info->dlpi_phnum; i++) {
        const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
        uintptr_t lo = info->dlpi_addr + ph->p_vaddr;
        if (ph->p_type == PT_LOAD && (ph->p_flags & PF_R) && a >= lo && a - lo <= ph->p_memsz &&
            ph->p_memsz - (a - lo) >= n)
            return 1;
    }
    return 0;
}

/* The search table of .eh_frame_hdr at hdr (version 1, 4-byte entries relative to the header),
 * or nothing when it has another layout: then no function start is known. */
static void read_eh_frame_hdr(const struct dl_phdr_info *info, uintptr_t hdr, size_t len,
                              struct hp_obj_code *oc)
{
    const uint8_t *h = (const uint8_t *)hdr;
    if (len < 12 || !inside(info, hdr, len) || h[0] != 1 ||
        ((h[1] & 0x0f) != PE_SDATA4 && (h[1] & 0x0f) != PE_UDATA4) || h[2] != PE_UDATA4 ||
        h[3] != (PE_DATAREL | PE_SDATA4))
        return;
    uint32_t n;
    hp_memcpy(&n, h + 8, 4);
    if ((size_t)n > (len - 12) / 8)
        return; /* a table longer than its section: not this layout after all */
    oc->fn_table = h + 12;
    oc->fn_count = n;
    oc->fn_base = hdr;
}

/* A value of the dynamic section that names an address: the loader leaves these as the link
 * editor wrote them (relative to the load address); taken as they are when that is what lies
 * inside the object. */
static uintptr_t dyn_addr(const struct dl_phdr_info *info, uintptr_t v, size_t n)
{
    if (inside(info, info->dlpi_addr + v, n))
        return info->dlpi_addr + v;
    return inside(info, v, n) ? v : 0;
}

static void read_dynamic(const struct dl_phdr_info *info, const ElfW(Dyn) *d, struct hp_obj_code *oc)
{
    uintptr_t arr[3] = {0, 0, 0}, sz[3] = {0, 0, 0}, fn[2] = {0, 0};
    for (int k = 0; k < 4096 && inside(info, (uintptr_t)&d[k], sizeof d[k]) && d[k].d_tag != DT_NULL; k++) {
        switch (d[k].d_tag) {
        case DT_INIT_ARRAY: arr[0] = d[k].d_un.d_ptr; break;
        case DT_FINI_ARRAY: arr[1] = d[k].d_un.d_ptr; break;
        case DT_PREINIT_ARRAY: arr[2] = d[k].d_un.d_ptr; break;
        case DT_INIT_ARRAYSZ: sz[0] = d[k].d_un.d_val; break;
        case DT_FINI_ARRAYSZ: sz[1] = d[k].d_un.d_val; break;
        case DT_PREINIT_ARRAYSZ: sz[2] = d[k].d_un.d_val; break;
        case DT_INIT: fn[0] = d[k].d_un.d_ptr; break;
        case DT_FINI: fn[1] = d[k].d_un.d_ptr; break;
        }
    }
    for (int i = 0; i < 3; i++) {
        uintptr_t a = arr[i] && sz[i] ? dyn_addr(info, arr[i], sz[i]) : 0;
        oc->arr_lo[i] = a;
        oc->arr_hi[i] = a ? a + sz[i] : 0;
    }
    for (int i = 0; i < 2; i++)
        oc->init_fn[i] = fn[i] ? dyn_addr(info, fn[i], 1) : 0;
}

void hp_obj_code_read(const struct dl_phdr_info *info, struct hp_obj_code *oc)
{
    hp_memset(oc, 0, sizeof *oc);
    for (ElfW(Half) i = 0; i < info->dlpi_phnum; i++) {
        const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
        uintptr_t at = info->dlpi_addr + ph->p_vaddr;
        if (ph->p_type == PT_GNU_EH_FRAME)
            read_eh_frame_hdr(info, at, ph->p_memsz, oc);
        else if (ph->p_type == PT_DYNAMIC)
            read_dynamic(info, (const ElfW(Dyn) *)at, oc);
    }
}

int hp_obj_fn_start(const struct hp_obj_code *oc, uintptr_t a)
{
    size_t lo = 0, hi = oc->fn_count;
    while (lo < hi) { /* the table is sorted by start */
        size_t mid = lo + (hi - lo) / 2;
        int32_t rel;
        hp_memcpy(&rel, oc->fn_table + mid * 8, 4);
        uintptr_t s = oc->fn_base + (uintptr_t)(intptr_t)rel;
        if (s == a)
            return 1;
        if (s < a)
            lo = mid + 1;
        else
            hi = mid;
    }
    return 0;
}

int hp_obj_init_data(const struct hp_obj_code *oc, uintptr_t a)
{
    for (int i = 0; i < 3; i++)
        if (a >= oc->arr_lo[i] && a < oc->arr_hi[i])
            return 1;
    return 0;
}

int hp_obj_init_fn(const struct hp_obj_code *oc, uintptr_t a)
{
    return a && (a == oc->init_fn[0] || a == oc->init_fn[1]);
}

#endif
