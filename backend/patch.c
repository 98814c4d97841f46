/* Patching an allocator that LD_PRELOAD cannot get in front of (patch_internal.h).
 *
 * The dynamic loader binds `malloc` to the first definition in lookup order, and the program
 * itself comes before any preloaded library: a program linked statically with jemalloc or
 * tcmalloc (or with an allocator of its own) keeps every allocation away from the shim. So the
 * first five bytes of each of that object's allocator entry points are replaced by a jump to a
 * stub near it; the stub goes on to the shim's function of the same name. The instructions the
 * jump replaced are moved into a trampoline (branches and rip-relative operands adjusted), which
 * then jumps back to the rest of the function: calling the trampoline runs the original
 * allocator, and that is the shim's backend.
 *
 *   entry stub:    cmpb $0, %fs:in_backend; jne trampoline; push %rbp; mov %rsp,%rbp;
 *                  push %r11; movabs $shim_function,%r11; jmp *keep_regs_routine
 *   backend stub:  sub $8,%rsp; incb %fs:in_backend; call trampoline; decb ...; add; ret
 *
 * The per-thread flag sends the allocator's calls of its own entry points (tcmalloc's
 * posix_memalign calls its memalign, say) made while the shim is inside it straight to the
 * original code, so a block is never wrapped twice. Stubs and trampolines live on pages mapped
 * within 2 GiB of the object, so 32-bit displacements reach both ways.
 *
 * What is patched: every allocation function the object exports among the names the shim
 * interposes (C, jemalloc's and tcmalloc's APIs, C++ operator new and delete), each distinct
 * address once. All or nothing, so no block made by the shim can reach an unpatched free of
 * the allocator's: an object that defines malloc and operator new is an allocator (tcmalloc,
 * jemalloc, mimalloc), whose operator new is its own. Any doubt (an instruction the decoder does not know, a function shorter than
 * the jump, a branch back into the replaced bytes, no room for the stubs, a page that cannot
 * be made writable) leaves every function untouched. */
#include "patch_internal.h"
#include "x86_internal.h"
#include "backend/backend.h"
#include "rt/rt.h"

#include <dlfcn.h>
#include <elf.h>
#include <fcntl.h>
#include <link.h>
#include <stdint.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#if defined(__x86_64__)

/* The C allocation API, in order of preference when several names share one address (the
 * first name's shim function is the one the address leads to). */
static const char *const names[] = {
    "malloc", "free", "calloc", "realloc", "memalign", "malloc_usable_size", "mallocx", "rallocx",
    "xallocx", "dallocx", "aligned_alloc", "posix_memalign", "valloc", "pvalloc", "reallocarray",
    "cfree", "free_sized", "free_aligned_sized", "malloc_size", "sallocx", "sdallocx", "nallocx",
    "__libc_malloc", "__libc_free", "__libc_calloc", "__libc_realloc", "__libc_memalign",
    "__libc_valloc", "__libc_pvalloc", "__posix_memalign", "tc_malloc",
    "tc_malloc_skip_new_handler", "tc_free", "tc_free_sized", "tc_cfree", "tc_realloc",
    "tc_calloc", "tc_memalign", "tc_posix_memalign", "tc_valloc", "tc_pvalloc", "tc_malloc_size",
    "tc_nallocx",
    /* C++: the allocator's own operators (tcmalloc defines them all). */
    "_Znwm", "_Znam", "_ZnwmRKSt9nothrow_t", "_ZnamRKSt9nothrow_t", "_ZnwmSt11align_val_t",
    "_ZnamSt11align_val_t", "_ZnwmSt11align_val_tRKSt9nothrow_t",
    "_ZnamSt11align_val_tRKSt9nothrow_t", "_ZdlPv", "_ZdaPv", "_ZdlPvm", "_ZdaPvm",
    "_ZdlPvRKSt9nothrow_t", "_ZdaPvRKSt9nothrow_t", "_ZdlPvSt11align_val_t",
    "_ZdaPvSt11align_val_t", "_ZdlPvmSt11align_val_t", "_ZdaPvmSt11align_val_t",
    "_ZdlPvSt11align_val_tRKSt9nothrow_t", "_ZdaPvSt11align_val_tRKSt9nothrow_t", "tc_new",
    "tc_newarray", "tc_new_nothrow", "tc_newarray_nothrow", "tc_new_aligned",
    "tc_newarray_aligned", "tc_new_aligned_nothrow", "tc_newarray_aligned_nothrow", "tc_delete",
    "tc_deletearray", "tc_delete_sized", "tc_deletearray_sized", "tc_delete_nothrow",
    "tc_deletearray_nothrow", "tc_delete_aligned", "tc_deletearray_aligned",
    "tc_delete_sized_aligned", "tc_deletearray_sized_aligned", "tc_delete_aligned_nothrow",
    "tc_deletearray_aligned_nothrow",
    /* mimalloc's API (shim/mi.c) and the BSD names it defines too. */
    "reallocf", "reallocarr", "mi_malloc", "mi_calloc", "mi_zalloc", "mi_malloc_small",
    "mi_zalloc_small", "mi_mallocn", "mi_strdup", "mi_strndup", "mi_realpath", "mi_mbsdup",
    "mi_wcsdup", "mi_malloc_aligned", "mi_malloc_aligned_at", "mi_zalloc_aligned",
    "mi_zalloc_aligned_at", "mi_calloc_aligned", "mi_calloc_aligned_at", "mi_memalign",
    "mi_posix_memalign", "mi_aligned_alloc", "mi_valloc", "mi_pvalloc", "mi_realloc", "mi_expand",
    "mi__expand", "mi_reallocn", "mi_reallocf", "mi_reallocarray", "mi_reallocarr", "mi_rezalloc",
    "mi_recalloc", "mi_realloc_aligned", "mi_realloc_aligned_at", "mi_rezalloc_aligned",
    "mi_rezalloc_aligned_at", "mi_recalloc_aligned", "mi_recalloc_aligned_at",
    "mi_aligned_recalloc", "mi_aligned_offset_recalloc", "mi_free", "mi_cfree", "mi_free_size",
    "mi_free_aligned", "mi_free_size_aligned", "mi_usable_size", "mi_malloc_size",
    "mi_malloc_usable_size", "mi_new", "mi_new_aligned", "mi_new_nothrow",
    "mi_new_aligned_nothrow", "mi_new_n", "mi_new_realloc", "mi_new_reallocn", "mi_heap_malloc",
    "mi_heap_zalloc", "mi_heap_calloc", "mi_heap_mallocn", "mi_heap_malloc_small",
    "mi_heap_strdup", "mi_heap_strndup", "mi_heap_realpath", "mi_heap_malloc_aligned",
    "mi_heap_malloc_aligned_at", "mi_heap_zalloc_aligned", "mi_heap_zalloc_aligned_at",
    "mi_heap_calloc_aligned", "mi_heap_calloc_aligned_at", "mi_heap_realloc", "mi_heap_reallocn",
    "mi_heap_reallocf", "mi_heap_rezalloc", "mi_heap_recalloc", "mi_heap_realloc_aligned",
    "mi_heap_realloc_aligned_at", "mi_heap_rezalloc_aligned", "mi_heap_rezalloc_aligned_at",
    "mi_heap_recalloc_aligned", "mi_heap_recalloc_aligned_at", "mi_heap_alloc_new",
    "mi_heap_alloc_new_n", "mi_heap_destroy", "mi_heap_visit_blocks", "mi_register_deferred_free",
    "mi_register_error",
};
#define NNAMES (sizeof names / sizeof names[0])

/* The allocator's API beyond allocation (control, statistics), not patched: the program's calls
 * of it take no block, and what it frees inside are the allocator's own blocks, so the look for
 * paths past the entry points (reach.c) does not follow them. Exact names, then prefixes. */
static const char *const api_names[] = {
    "mallctl", "mallctlnametomib", "mallctlbymib", "malloc_stats_print", "mallopt", "mallinfo",
    "mallinfo2", "malloc_trim", "malloc_stats", "malloc_info", "mi_collect", "mi_stats_print",
};
static const char *const api_prefixes[] = {"MallocExtension_", "mi_option_", "mi_stats_"};
#define MAX_APIS 64
static struct {
    void *fn;
    size_t size;
} apis[MAX_APIS];
static int napis;

#define JMP_LEN 5    /* e9 rel32: what is written over each entry */
#define ABS_JMP 14   /* ff 25 00000000 <8-byte address> */
#define TRAMP_MAX 96 /* relocated instructions (at most 5, each at most 16 bytes after
                      * rewriting) and the jump back */
#define STUB_MAX 48

struct hook {
    const char *name;
    uint8_t *fn;       /* the object's function */
    size_t size;       /* its ELF symbol size, 0 if unknown */
    void *shim_fn;     /* the shim's function of the same name */
    int keeps_rax;     /* the function returns nothing: the caller's rax comes back too */
    int moved;         /* bytes of fn the trampoline holds */
    uint8_t saved[JMP_LEN];
    uint8_t *tramp;    /* runs the original function */
    uint8_t *entry;    /* where fn jumps now */
    uint8_t *backend;  /* the trampoline, called with the flag set */
};

static struct hook hooks[NNAMES];
static int nhooks;
static int patched; /* hooks[] are live */

/* Non-zero while this thread runs the original allocator on the shim's behalf. */
static __thread uint8_t in_backend __attribute__((tls_model("initial-exec")));

static void put32(uint8_t *p, int32_t v) { hp_memcpy(p, &v, 4); }
static void put64(uint8_t *p, uint64_t v) { hp_memcpy(p, &v, 8); }

static int fits32(int64_t v) { return v >= INT32_MIN && v <= INT32_MAX; }

/* jmp *0(%rip) followed by the target: reaches anywhere. */
static uint8_t *emit_abs_jmp(uint8_t *p, uint64_t target)
{
    p[0] = 0xff;
    p[1] = 0x25;
    put32(p + 2, 0);
    put64(p + 6, target);
    return p + ABS_JMP;
}

/* Move the first instructions of fn (at least JMP_LEN bytes of them) to out, adjusted for
 * their new place, then a jump back to the rest. Returns the bytes of fn taken, or 0. */
static int relocate(const uint8_t *fn, size_t size, uint8_t *out)
{
    int taken = 0;
    uint8_t *p = out;
    while (taken < JMP_LEN) {
        struct hp_x86_insn in;
        if (!hp_x86_decode(fn + taken, 15, &in))
            return 0;
        const uint8_t *at = fn + taken;
        taken += in.len;
        if (size && (size_t)taken > size && in.kind != HP_X86_END)
            return 0;
        switch (in.kind) {
        case HP_X86_PLAIN:
        case HP_X86_END:
            hp_memcpy(p, at, (size_t)in.len);
            if (in.rip_disp >= 0) {
                int32_t d;
                hp_memcpy(&d, at + in.rip_disp, 4);
                int64_t nd = (int64_t)d + (int64_t)(at - p);
                if (!fits32(nd))
                    return 0;
                put32(p + in.rip_disp, (int32_t)nd);
            }
            p += in.len;
            if (in.kind == HP_X86_END)
                /* Control ends here: the bytes after it up to JMP_LEN would be overwritten
                 * while perhaps reachable from elsewhere, unless the jump covers no more. */
                return taken >= JMP_LEN ? taken : 0;
            break;
        case HP_X86_JMP:
            p = emit_abs_jmp(p, in.target);
            return taken >= JMP_LEN ? taken : 0;
        case HP_X86_JCC:
            /* j!cc over an absolute jump to the target. */
            p[0] = (uint8_t)(0x70 | (in.cc ^ 1));
            p[1] = ABS_JMP;
            p = emit_abs_jmp(p + 2, in.target);
            break;
        case HP_X86_CALL:
            /* call *2(%rip); jmp over the address; the address. */
            p[0] = 0xff;
            p[1] = 0x15;
            put32(p + 2, 2);
            p[6] = 0xeb;
            p[7] = 8;
            put64(p + 8, in.target);
            p += 16;
            break;
        }
    }
    emit_abs_jmp(p, (uint64_t)(uintptr_t)(fn + taken));
    return taken;
}

/* Does any relative branch in fn's body land inside the bytes the jump replaces (after their
 * first instruction)? A walk through the body as far as the decoder gets; its end or an
 * instruction it does not know ends the search (the body is then taken on trust). */
static int branches_into(const uint8_t *fn, size_t size, int moved)
{
    if (!size || size > (1u << 16))
        return 0;
    for (size_t at = 0; at < size;) {
        struct hp_x86_insn in;
        if (!hp_x86_decode(fn + at, (int)(size - at < 15 ? size - at : 15), &in))
            return 0;
        if (in.kind == HP_X86_JMP || in.kind == HP_X86_JCC || in.kind == HP_X86_CALL) {
            uint64_t lo = (uint64_t)(uintptr_t)fn;
            if (in.target > lo && in.target < lo + (uint64_t)moved)
                return 1;
        }
        at += (size_t)in.len;
    }
    return 0;
}

static int32_t tls_offset(void)
{
    uintptr_t tp;
    __asm__("mov %%fs:0, %0" : "=r"(tp));
    return (int32_t)((intptr_t)&in_backend - (intptr_t)tp);
}

static uint8_t *emit_entry(uint8_t *p, const struct hook *h, int32_t flag)
{
    /* cmpb $0, %fs:flag; jne tramp */
    static const uint8_t cmp[] = {0x64, 0x80, 0x3c, 0x25};
    hp_memcpy(p, cmp, 4);
    put32(p + 4, flag);
    p[8] = 0;
    p[9] = 0x0f;
    p[10] = 0x85;
    put32(p + 11, (int32_t)(h->tramp - (p + 15)));
    p += 15;
    /* push %rbp; mov %rsp,%rbp; push %r11; movabs $shim_fn,%r11 */
    static const uint8_t frame[] = {0x55, 0x48, 0x89, 0xe5, 0x41, 0x53, 0x49, 0xbb};
    hp_memcpy(p, frame, sizeof frame);
    put64(p + sizeof frame, (uint64_t)(uintptr_t)h->shim_fn);
    p += sizeof frame + 8;
    void (*routine)(void) = h->keeps_rax ? hp_patch_call_void : hp_patch_call_value;
    return emit_abs_jmp(p, (uint64_t)(uintptr_t)routine);
}

static uint8_t *emit_backend(uint8_t *p, const struct hook *h, int32_t flag)
{
    static const uint8_t sub8[] = {0x48, 0x83, 0xec, 0x08}, add8[] = {0x48, 0x83, 0xc4, 0x08};
    hp_memcpy(p, sub8, 4);
    p += 4;
    p[0] = 0x64, p[1] = 0xfe, p[2] = 0x04, p[3] = 0x25; /* incb %fs:flag */
    put32(p + 4, flag);
    p += 8;
    p[0] = 0xe8; /* call tramp */
    put32(p + 1, (int32_t)(h->tramp - (p + 5)));
    p += 5;
    p[0] = 0x64, p[1] = 0xfe, p[2] = 0x0c, p[3] = 0x25; /* decb %fs:flag */
    put32(p + 4, flag);
    p += 8;
    hp_memcpy(p, add8, 4);
    p += 4;
    *p++ = 0xc3;
    return p;
}

/* Pages for the stubs within reach (32-bit displacements) of [lo, hi). */
static uint8_t *map_near(uintptr_t lo, uintptr_t hi, size_t len)
{
    for (uintptr_t d = 1u << 20; d < (1u << 30); d <<= 1) {
        uintptr_t hints[2] = {(lo - d - len) & ~(uintptr_t)0xffff, (hi + d) & ~(uintptr_t)0xffff};
        for (int k = 0; k < 2; k++) {
            if ((k == 0 && lo < d + len + (1u << 16)) || hints[k] == 0)
                continue;
            void *m = mmap((void *)hints[k], len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
            if (m == MAP_FAILED)
                continue;
            uintptr_t a = (uintptr_t)m;
            if (fits32((int64_t)(a + len) - (int64_t)lo) && fits32((int64_t)hi - (int64_t)a))
                return m;
            munmap(m, len);
        }
    }
    return NULL;
}

static int set_prot(uint8_t *fn, int prot)
{
    uintptr_t page = (uintptr_t)fn & ~(uintptr_t)4095;
    size_t len = ((uintptr_t)fn + JMP_LEN - page + 4095) & ~(size_t)4095;
    return mprotect((void *)page, len, prot);
}


/* Does the object loaded at base define name? */
struct object_syms {
    const void *base;
    struct hp_dynsyms ds;
    int ok;
};

static int find_object_syms(struct dl_phdr_info *info, size_t size, void *arg)
{
    (void)size;
    struct object_syms *o = arg;
    for (ElfW(Half) i = 0; i < info->dlpi_phnum; i++) {
        const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
        uintptr_t a = info->dlpi_addr + ph->p_vaddr;
        if (ph->p_type == PT_LOAD && (uintptr_t)o->base - a < ph->p_memsz) {
            o->ok = hp_dynsyms_of(info, &o->ds) == 0;
            return 1;
        }
    }
    return 0;
}

/* The dynamic symbols of the object loaded at base: looked up in its own table, not with dlsym,
 * whose failures allocate (dlerror's buffer) from the allocator being patched. */
static struct object_syms alloc_syms;

static int object_syms(const void *base)
{
    hp_memset(&alloc_syms, 0, sizeof alloc_syms);
    alloc_syms.base = base;
    return dl_iterate_phdr(find_object_syms, &alloc_syms) && alloc_syms.ok;
}

static int defined_in(const char *name)
{
    return alloc_syms.ok && hp_dynsym_find(&alloc_syms.ds, name) != NULL;
}

/* The shim's own dynamic symbols: what add_hook redirects to. */
static struct hp_dynsyms self_syms;

static int find_self(struct dl_phdr_info *info, size_t size, void *arg)
{
    (void)size, (void)arg;
    uintptr_t here = (uintptr_t)&hp_patch_allocator;
    for (ElfW(Half) i = 0; i < info->dlpi_phnum; i++) {
        const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
        if (ph->p_type == PT_LOAD && here - (info->dlpi_addr + ph->p_vaddr) < ph->p_memsz)
            return hp_dynsyms_of(info, &self_syms) == 0;
    }
    return 0;
}

static const struct hp_dynsyms *self_handle(void)
{
    return dl_iterate_phdr(find_self, NULL) ? &self_syms : NULL;
}

/* Is the allocator one of the families whose whole API the shim interposes and patches
 * (names[]), known by a function only that family defines: jemalloc, tcmalloc, mimalloc?
 * Their code behind that API is their own; an allocator of the program's own may have ways in
 * that the shim cannot know. (A name sharing an address with one found earlier is no hook of
 * its own: add_hook notes the mark before it looks.) */
static int family_seen; /* add_hook met one of family_mark's names */

static int family_mark(const char *name)
{
    static const char *const marks[] = {"mallocx", "sdallocx", "tc_malloc", "tc_free", "mi_malloc", "mi_free"};
    for (size_t k = 0; k < sizeof marks / sizeof marks[0]; k++)
        if (!hp_strcmp(name, marks[k]))
            return 1;
    return 0;
}

/* Does the entry point `name` return nothing? Its caller's rax is then kept as well (a caller
 * that -fipa-ra lets keep a value there). Only these names: taking a function with a result
 * for one without would lose the result. */
static int returns_nothing(const char *name)
{
    static const char *const names_void[] = {
        "free", "cfree", "free_sized", "free_aligned_sized", "dallocx", "sdallocx", "__libc_free",
        "tc_free", "tc_free_sized", "tc_cfree", "mi_free", "mi_cfree", "mi_free_size",
        "mi_free_aligned", "mi_free_size_aligned", "mi_heap_destroy", "mi_register_deferred_free",
        "mi_register_error"};
    if (!hp_strncmp(name, "_Zd", 3) || !hp_strncmp(name, "tc_delete", 9))
        return 1;
    for (size_t i = 0; i < sizeof names_void / sizeof names_void[0]; i++)
        if (!hp_strcmp(name, names_void[i]))
            return 1;
    return 0;
}

/* Add the function fn (size bytes, 0: unknown) as names[k], unless its address is already
 * taken (an alias). -1 (and *why) when it cannot be patched. */
static int add_hook(size_t k, void *fn, size_t size, const struct hp_dynsyms *self, const char **why)
{
    family_seen |= family_mark(names[k]);
    for (int j = 0; j < nhooks; j++) {
        if (!hp_strcmp(hooks[j].name, names[k]))
            return 0; /* found already */
        uintptr_t a = (uintptr_t)hooks[j].fn, b = (uintptr_t)fn;
        if (a == b)
            return 0;
        if ((a < b ? b - a : a - b) < JMP_LEN) {
            *why = "two entry points lie closer together than a jump";
            return -1;
        }
    }
    struct hook *h = &hooks[nhooks++];
    hp_memset(h, 0, sizeof *h);
    h->name = names[k];
    h->fn = fn;
    h->size = size;
    h->shim_fn = hp_dynsym_find(self, names[k]);
    h->keeps_rax = returns_nothing(names[k]);
    if (!h->shim_fn || h->shim_fn == fn) {
        *why = "the shim lacks one of the allocator's functions";
        return -1;
    }
    if (size && size < JMP_LEN) {
        *why = "an entry point is shorter than a jump";
        return -1;
    }
    return 0;
}

/* The index in names[] of symbol s (at most max bytes) once prefix is taken off its front. */
static int name_index(const char *prefix, const char *s, size_t max)
{
    while (*prefix) {
        if (!max || *s != *prefix)
            return -1;
        s++, prefix++, max--;
    }
    for (size_t k = 0; k < NNAMES; k++) {
        const char *n = names[k];
        size_t i = 0;
        while (i < max && n[i] && n[i] == s[i])
            i++;
        if (!n[i] && i < max && !s[i])
            return (int)k;
    }
    return -1;
}

static int nul_within(const char *s, size_t max)
{
    for (size_t i = 0; i < max; i++)
        if (!s[i])
            return 1;
    return 0;
}

/* Is s (at most max bytes) prefix + one of the allocator's other API functions? */
static int is_api(const char *prefix, const char *s, size_t max)
{
    size_t pl = hp_strlen(prefix);
    if (!nul_within(s, max) || hp_strncmp(s, prefix, pl) != 0)
        return 0;
    s += pl;
    for (size_t k = 0; k < sizeof api_names / sizeof api_names[0]; k++)
        if (!hp_strcmp(s, api_names[k]))
            return 1;
    for (size_t k = 0; k < sizeof api_prefixes / sizeof api_prefixes[0]; k++)
        if (!hp_strncmp(s, api_prefixes[k], hp_strlen(api_prefixes[k])))
            return 1;
    return 0;
}

static void add_api(void *fn, size_t size)
{
    for (int j = 0; j < napis; j++)
        if (apis[j].fn == fn)
            return;
    if (napis < MAX_APIS)
        apis[napis].fn = fn, apis[napis++].size = size;
}

/* The main program's full symbol table (.symtab, read from the file it runs from; absent
 * when stripped): functions among names[] that the dynamic symbol table did not give, local
 * ones too (a hidden definition, as -fvisibility=hidden leaves a sized operator delete, is a
 * local symbol of the linked program, still called by its code). (A shared library exports
 * every global function a program can call.) The file's addresses
 * are placed by the program's malloc when its run-time address is given, else by the program's
 * load address; prefix is what the names carry in front (hp_patch_prefixed). */
static int symtab_scan(const char *prefix, void *malloc_fn, void *base, const struct hp_dynsyms *self,
                       const char **why)
{
    const ElfW(Ehdr) *mem = base;
    if ((uintptr_t)base != (uintptr_t)getauxval(AT_PHDR) - mem->e_phoff)
        return 0; /* not the main program */
    int fd = (int)hp_sys_open("/proc/self/exe", O_RDONLY | O_CLOEXEC, 0);
    if (fd < 0)
        return 0;
    struct stat st;
    void *map = MAP_FAILED;
    if (fstat(fd, &st) == 0 && st.st_size >= (off_t)sizeof(ElfW(Ehdr)))
        map = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
    syscall(SYS_close, fd); /* not close(): a cancellation point (see hp_sleep_ns) */
    if (map == MAP_FAILED)
        return 0;
    const uint8_t *f = map;
    size_t fsize = (size_t)st.st_size;
    const ElfW(Ehdr) *eh = map;
    int r = 0;
    const ElfW(Shdr) *sh = (const ElfW(Shdr) *)(f + eh->e_shoff);
    if (hp_memcmp(eh->e_ident, ELFMAG, SELFMAG) != 0 || eh->e_ident[EI_CLASS] != ELFCLASS64 ||
        eh->e_shentsize != sizeof(ElfW(Shdr)) || eh->e_shoff > fsize ||
        (size_t)eh->e_shnum * sizeof(ElfW(Shdr)) > fsize - eh->e_shoff)
        goto out;
    for (unsigned i = 0; i < eh->e_shnum; i++) {
        if (sh[i].sh_type != SHT_SYMTAB || sh[i].sh_link >= eh->e_shnum ||
            sh[i].sh_offset > fsize || sh[i].sh_size > fsize - sh[i].sh_offset)
            continue;
        const ElfW(Shdr) *strs = &sh[sh[i].sh_link];
        if (strs->sh_offset > fsize || strs->sh_size > fsize - strs->sh_offset)
            continue;
        const ElfW(Sym) *syms = (const ElfW(Sym) *)(f + sh[i].sh_offset);
        size_t nsyms = sh[i].sh_size / sizeof(ElfW(Sym));
        const char *str = (const char *)(f + strs->sh_offset);
        /* Where the file's addresses are now: the object's malloc is known, or else the
         * program's load address (dladdr below checks each function against it). */
        uintptr_t bias = eh->e_type == ET_DYN ? (uintptr_t)base : 0;
        int have_bias = !malloc_fn;
        for (size_t k = 0; k < nsyms && !have_bias; k++)
            if (syms[k].st_name < strs->sh_size && ELF64_ST_TYPE(syms[k].st_info) == STT_FUNC &&
                syms[k].st_shndx != SHN_UNDEF &&
                name_index("", str + syms[k].st_name, strs->sh_size - syms[k].st_name) == 0)
                bias = (uintptr_t)malloc_fn - syms[k].st_value, have_bias = 1;
        if (!have_bias)
            break;
        for (size_t k = 0; k < nsyms; k++) {
            const ElfW(Sym) *y = &syms[k];
            int bind = ELF64_ST_BIND(y->st_info);
            if (y->st_name >= strs->sh_size || ELF64_ST_TYPE(y->st_info) != STT_FUNC ||
                y->st_shndx == SHN_UNDEF || y->st_value == 0 ||
                (bind != STB_GLOBAL && bind != STB_WEAK && bind != STB_LOCAL))
                continue;
            int idx = name_index(prefix, str + y->st_name, strs->sh_size - y->st_name);
            void *fn = (void *)(bias + y->st_value);
            if (idx < 0 && is_api(prefix, str + y->st_name, strs->sh_size - y->st_name) &&
                hp_object_start(fn) == base)
                add_api(fn, y->st_size);
            if (idx < 0)
                continue;
            if (hp_object_start(fn) != base)
                continue; /* not where the object is: the file is not what is loaded */
            if (add_hook((size_t)idx, fn, y->st_size, self, why) != 0) {
                r = -1;
                goto out;
            }
        }
        break;
    }
out:
    munmap(map, fsize);
    return r;
}

static int install_hooks(const char **why);

/* Does w occur in s? */
static int contains(const char *s, const char *w)
{
    size_t n = hp_strlen(w);
    for (; *s; s++)
        if (!hp_strncmp(s, w, n))
            return 1;
    return 0;
}

/* Does the entry point `name` take a block back (so a block of the shim's reaches it)? */
static int takes_back(const char *name)
{
    static const char *const words[] = {"free", "delete", "realloc", "dalloc", "rallocx",
                                        "xallocx", "expand", "recalloc", "rezalloc", "destroy"};
    if (!hp_strncmp(name, "_Zd", 3))
        return 1;
    for (size_t i = 0; i < sizeof words / sizeof words[0]; i++)
        if (contains(name, words[i]))
            return 1;
    return 0;
}

/* Patching must be complete or not happen: a block the shim made, with its header, that
 * reached one of the allocator's free paths past the patched entry points would be freed at
 * the wrong address (PartitionAlloc traps on it). reach.c looks for such paths. */
static int complete(const char **why, int *bypass)
{
    static struct hp_reach_entry ents[NNAMES + MAX_APIS];
    int n = 0;
    for (int j = 0; j < nhooks; j++, n++) {
        ents[n].fn = (uintptr_t)hooks[j].fn;
        ents[n].size = hooks[j].size;
        ents[n].role = takes_back(hooks[j].name) ? HP_REACH_FREE : HP_REACH_ALLOC;
    }
    for (int j = 0; j < napis; j++, n++) {
        ents[n].fn = (uintptr_t)apis[j].fn;
        ents[n].size = apis[j].size;
        ents[n].role = HP_REACH_API;
    }
    /* A sanitizer's runtime linked into the program (clang's -fsanitize=address, thread,
     * memory, leak) is reached by the program's code only through its interface (__asan_*,
     * __tsan_*, its interceptors), none of which frees a block of the program's; the code
     * behind it shares its internals (their assertions, their own allocator) with free. */
    int runtime = defined_in("__sanitizer_print_stack_trace");
    return hp_reach_check(ents, n, !runtime, why, bypass);
}

/* The entry points patched for an allocator profiled without headers: the C and C++ ones,
 * whose shim functions hand the allocator's own pointers through untouched when the shim
 * profiles without headers. Others (jemalloc's flags, mimalloc's heaps, tcmalloc's and glibc's
 * extra names) stay as they are: what goes through them is not seen, and cannot be harmed. The
 * shim serves the aligned forms with the allocator's memalign and reallocarray with its
 * realloc: without those they stay as they are too. */
static int headerless_name(const char *name, int memalign, int realloc)
{
    static const char *const plain[] = {"malloc", "free", "calloc", "realloc", "cfree"};
    static const char *const aligned[] = {"memalign", "aligned_alloc", "posix_memalign", "valloc",
                                          "pvalloc"};
    if (!hp_strncmp(name, "_Zd", 3))
        return 1;
    if (!hp_strncmp(name, "_Zn", 3))
        return memalign || !contains(name, "align_val_t");
    for (size_t i = 0; i < sizeof plain / sizeof plain[0]; i++)
        if (!hp_strcmp(name, plain[i]))
            return 1;
    for (size_t i = 0; i < sizeof aligned / sizeof aligned[0]; i++)
        if (!hp_strcmp(name, aligned[i]))
            return memalign;
    return realloc && !hp_strcmp(name, "reallocarray");
}

/* Keep of hooks[] only the entry points patched for profiling without headers. */
static void keep_headerless_hooks(void)
{
    int memalign = 0, realloc = 0;
    for (int j = 0; j < nhooks; j++) {
        memalign |= !hp_strcmp(hooks[j].name, "memalign");
        realloc |= !hp_strcmp(hooks[j].name, "realloc");
    }
    int k = 0;
    for (int j = 0; j < nhooks; j++)
        if (headerless_name(hooks[j].name, memalign, realloc))
            hooks[k++] = hooks[j];
    nhooks = k;
}

/* The allocator's other API functions that the object at base exports (the rest come from its
 * full symbol table, symtab_scan). */
static void exported_apis(void)
{
    for (size_t k = 0; k < sizeof api_names / sizeof api_names[0]; k++) {
        void *fn = alloc_syms.ok ? hp_dynsym_find(&alloc_syms.ds, api_names[k]) : NULL;
        Dl_info fi;
        const ElfW(Sym) *sym = NULL;
        if (fn && dladdr1(fn, &fi, (void **)&sym, RTLD_DL_SYMENT))
            add_api(fn, sym ? sym->st_size : 0);
    }
}

int hp_patch_allocator(void *malloc_fn, int allow_headerless, const char **why)
{
    Dl_info info;
    if (patched) {
        *why = "already patched";
        return -1;
    }
    malloc_fn = hp_bound_symbol("malloc");
    if (!malloc_fn || !dladdr(malloc_fn, &info)) {
        *why = "malloc is in no loaded object";
        return -1;
    }
    void *base = info.dli_fbase;
    const struct hp_dynsyms *self = self_handle();
    if (!self) {
        *why = "the shim cannot find itself";
        return -1;
    }
    nhooks = 0;
    napis = 0;
    family_seen = 0;
    object_syms(base);
    exported_apis();
    /* The names the object exports, then those only its full symbol table has (an executable
     * exports only what shared libraries use: a program linked with jemalloc keeps mallocx
     * and sdallocx to itself, and a block of the shim's must not reach them unpatched). */
    for (size_t k = 0; k < NNAMES; k++) {
        void *fn = hp_bound_symbol(names[k]);
        Dl_info fi;
        const ElfW(Sym) *sym = NULL;
        if (!fn || !dladdr1(fn, &fi, (void **)&sym, RTLD_DL_SYMENT) || fi.dli_fbase != base)
            continue;
        if (add_hook(k, fn, sym ? sym->st_size : 0, self, why) != 0)
            return -1;
    }
    if (symtab_scan("", malloc_fn, base, self, why) != 0)
        return -1;
    /* Headers only where every way into the allocator's free paths passes an entry point: the
     * allocator is one whose whole API the shim knows and patches, and the look through the
     * program's code finds no path past it. Any other allocator (one of the program's own,
     * Chromium's PartitionAlloc) is profiled without headers, which needs no such proof: its
     * pointers stay its own, so a free through a path the shim does not see harms nothing. */
    int bypass;
    int rc = complete(why, &bypass);
    if (rc == 0 && family_seen)
        return install_hooks(why) == 0 ? (patched = 1, 0) : -1;
    if (rc == 0)
        *why = "it is not an allocator whose every entry point the shim knows";
    if (!allow_headerless)
        return -1;
    keep_headerless_hooks();
    const char *why_not = *why;
    if (install_hooks(why) != 0)
        return -1;
    patched = 1;
    *why = why_not;
    return rc == 0 ? 2 : 1;
}

/* Write the jumps of hooks[0..nhooks): all or none. */
static int install_hooks(const char **why)
{
    uintptr_t lo = UINTPTR_MAX, hi = 0;
    for (int j = 0; j < nhooks; j++) {
        uintptr_t a = (uintptr_t)hooks[j].fn;
        if (a < lo)
            lo = a;
        if (a + hooks[j].size + JMP_LEN > hi)
            hi = a + hooks[j].size + JMP_LEN;
    }
    if (nhooks == 0) {
        *why = "no allocator function found to patch";
        return -1;
    }
    size_t per = TRAMP_MAX + 2 * STUB_MAX;
    size_t len = ((size_t)nhooks * per + 4095) & ~(size_t)4095;
    uint8_t *pages = map_near(lo, hi, len);
    if (!pages) {
        *why = "no room for the stubs within 2 GiB of the allocator";
        return -1;
    }
    int32_t flag = tls_offset();
    for (int j = 0; j < nhooks; j++) {
        struct hook *h = &hooks[j];
        uint8_t *slot = pages + (size_t)j * per;
        size_t size = h->size;
        h->tramp = slot;
        h->moved = relocate(h->fn, size, h->tramp);
        if (!h->moved || branches_into(h->fn, size, h->moved)) {
            munmap(pages, len);
            *why = h->moved ? "a branch leads into an entry point's first bytes"
                            : "an entry point starts with code the patcher does not know";
            return -1;
        }
        h->entry = slot + TRAMP_MAX;
        emit_entry(h->entry, h, flag);
        h->backend = slot + TRAMP_MAX + STUB_MAX;
        emit_backend(h->backend, h, flag);
    }
    if (mprotect(pages, len, PROT_READ | PROT_EXEC) != 0) {
        munmap(pages, len);
        *why = "cannot make the stubs executable";
        return -1;
    }
    /* All prepared: now write the jumps. Each page goes back to read+execute at once. */
    for (int j = 0; j < nhooks; j++) {
        struct hook *h = &hooks[j];
        if (set_prot(h->fn, PROT_READ | PROT_WRITE | PROT_EXEC) != 0) {
            for (int u = 0; u < j; u++) { /* undo */
                set_prot(hooks[u].fn, PROT_READ | PROT_WRITE | PROT_EXEC);
                hp_memcpy(hooks[u].fn, hooks[u].saved, JMP_LEN);
                set_prot(hooks[u].fn, PROT_READ | PROT_EXEC);
            }
            munmap(pages, len);
            *why = "cannot make the allocator's code writable";
            return -1;
        }
        hp_memcpy(h->saved, h->fn, JMP_LEN);
        uint8_t jmp[JMP_LEN] = {0xe9};
        put32(jmp + 1, (int32_t)(h->entry - (h->fn + JMP_LEN)));
        hp_memcpy(h->fn, jmp, JMP_LEN);
        set_prot(h->fn, PROT_READ | PROT_EXEC);
    }
    return 0;
}

static int redirected; /* hooks[] lead an allocator under a prefix to the shim */

int hp_patch_prefixed(const char *prefix, const char **why)
{
    if (patched || redirected) {
        *why = "the shim patched an allocator already";
        return -1;
    }
    Dl_info info;
    if (!dladdr((void *)getauxval(AT_ENTRY), &info)) { /* the program's load address */
        *why = "the program is in no loaded object";
        return -1;
    }
    const struct hp_dynsyms *self = self_handle();
    if (!self) {
        *why = "the shim cannot find itself";
        return -1;
    }
    nhooks = 0;
    napis = 0;
    object_syms(info.dli_fbase);
    if (symtab_scan(prefix, NULL, info.dli_fbase, self, why) != 0)
        return -1;
    if (nhooks == 0)
        return 0; /* no such allocator */
    int bypass;
    if (complete(why, &bypass) != 0)
        return -1;
    if (install_hooks(why) != 0)
        return -1;
    redirected = 1;
    return nhooks;
}

void *hp_patch_original(const char *name)
{
    if (!patched)
        return NULL;
    /* The name itself, or a name sharing its address. */
    void *fn = hp_bound_symbol(name);
    for (int j = 0; j < nhooks; j++)
        if (!hp_strcmp(hooks[j].name, name) || (fn && hooks[j].fn == fn))
            return hooks[j].backend;
    return NULL;
}

int hp_patch_count(void) { return patched ? nhooks : 0; }

void *hp_patch_patched(const char *name)
{
    for (int j = 0; patched && j < nhooks; j++)
        if (!hp_strcmp(hooks[j].name, name))
            return hooks[j].fn;
    return NULL;
}

int hp_patch_suspend(void)
{
    int v = in_backend;
    in_backend = 0;
    return v;
}

void hp_patch_resume(int state) { in_backend = (uint8_t)state; }

#else

int hp_patch_allocator(void *malloc_fn, int allow_headerless, const char **why)
{
    (void)malloc_fn, (void)allow_headerless;
    *why = "patching is implemented for x86_64 only";
    return -1;
}

int hp_patch_prefixed(const char *prefix, const char **why)
{
    (void)prefix;
    *why = "patching is implemented for x86_64 only";
    return -1;
}

void *hp_patch_original(const char *name)
{
    (void)name;
    return NULL;
}

int hp_patch_count(void) { return 0; }

void *hp_patch_patched(const char *name)
{
    (void)name;
    return NULL;
}

int hp_patch_suspend(void) { return 0; }

void hp_patch_resume(int state) { (void)state; }

#endif
