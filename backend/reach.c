/* Whether patching an allocator's entry points is enough (patch_internal.h: hp_reach_check): a
 * look through the object's own machine code for ways into the allocator's free paths that do
 * not pass an entry point the shim patches. */
#include "patch_internal.h"
#include "x86_internal.h"
#include "rt/rt.h"

#include <elf.h>
#include <link.h>
#include <stdint.h>
#include <sys/auxv.h>
#include <sys/mman.h>

#if defined(__x86_64__)

#define MAX_SEGS 16
#define MAX_INTERNAL 128
#define WALK_BUDGET ((size_t)8 << 20) /* instructions; a larger program is not analysed */
#define STACK_CAP ((size_t)1 << 20)
#define TABLE_MAX 4096                /* entries of one switch's jump table */
#define DATA_WINDOW 32                /* words of data looked through for code pointers */

struct seg {
    uintptr_t lo, hi;
    int exec;
};

struct reach {
    struct seg seg[MAX_SEGS];
    int nseg;
    uintptr_t xlo, xhi;      /* span of the executable segments */
    uintptr_t bias;
    int is_main;
    const struct hp_reach_entry *ent;
    int nent;
    uintptr_t internal[MAX_INTERNAL]; /* the allocator's internal free functions */
    int ninternal;
    uint8_t *seen;           /* one bit per byte of [xlo, xhi): an instruction decoded there */
    size_t seen_len;
    uintptr_t *stack;
    size_t nstack;
    size_t budget;
    uintptr_t found, from;   /* an internal free function reached, and the code that does */
    int overflow;
    int bypass;              /* the answer is no because of a path past the entry points */
    struct hp_obj_code oc;   /* where functions start, where the initialisers are */
};

static int in_exec(const struct reach *r, uintptr_t a)
{
    for (int i = 0; i < r->nseg; i++)
        if (r->seg[i].exec && a >= r->seg[i].lo && a < r->seg[i].hi)
            return 1;
    return 0;
}

/* Bytes of code readable at a (to its segment's end), at most 15: an instruction's most. */
static int code_left(const struct reach *r, uintptr_t a)
{
    for (int i = 0; i < r->nseg; i++)
        if (r->seg[i].exec && a >= r->seg[i].lo && a < r->seg[i].hi)
            return r->seg[i].hi - a < 15 ? (int)(r->seg[i].hi - a) : 15;
    return 0;
}

/* Are n bytes at a inside one of the object's segments (mapped, readable)? */
static int readable(const struct reach *r, uintptr_t a, size_t n)
{
    for (int i = 0; i < r->nseg; i++)
        if (a >= r->seg[i].lo && a <= r->seg[i].hi - n && r->seg[i].hi - r->seg[i].lo >= n)
            return 1;
    return 0;
}

static int is_entry(const struct reach *r, uintptr_t a)
{
    for (int i = 0; i < r->nent; i++)
        if (r->ent[i].fn == a)
            return 1;
    return 0;
}

static int is_internal(const struct reach *r, uintptr_t a)
{
    for (int i = 0; i < r->ninternal; i++)
        if (r->internal[i] == a)
            return 1;
    return 0;
}

/* A PLT entry (a call out of the object): jmp *slot(%rip), after endbr64 and a bnd prefix. */
static int plt_stub(const struct reach *r, uintptr_t a)
{
    if (!readable(r, a, 8))
        return 0;
    const uint8_t *p = (const uint8_t *)a;
    if (p[0] == 0xf3 && p[1] == 0x0f && p[2] == 0x1e && p[3] == 0xfa)
        p += 4;
    if (p[0] == 0xf2)
        p++;
    return p[0] == 0xff && p[1] == 0x25;
}

static int find_object(struct dl_phdr_info *info, size_t size, void *arg)
{
    (void)size;
    struct reach *r = arg;
    uintptr_t fn = r->ent[0].fn;
    int here = 0;
    for (ElfW(Half) i = 0; i < info->dlpi_phnum; i++) {
        const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
        if (ph->p_type == PT_LOAD && fn - (info->dlpi_addr + ph->p_vaddr) < ph->p_memsz)
            here = 1;
    }
    if (!here)
        return 0;
    r->bias = info->dlpi_addr;
    r->is_main = !info->dlpi_name || !info->dlpi_name[0];
    r->xlo = UINTPTR_MAX;
    for (ElfW(Half) i = 0; i < info->dlpi_phnum; i++) {
        const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
        if (ph->p_type != PT_LOAD || !(ph->p_flags & PF_R) || r->nseg == MAX_SEGS)
            continue; /* (a segment that cannot be read is no code or data to look at) */
        struct seg *s = &r->seg[r->nseg++];
        s->lo = info->dlpi_addr + ph->p_vaddr;
        s->hi = s->lo + ph->p_memsz;
        s->exec = (ph->p_flags & PF_X) != 0;
        if (s->exec && s->lo < r->xlo)
            r->xlo = s->lo;
        if (s->exec && s->hi > r->xhi)
            r->xhi = s->hi;
    }
    hp_obj_code_read(info, &r->oc);
    return 1;
}

/* The functions entry point e calls or jumps to outside its own body (other entry points and
 * calls out of the object left out), added to out[*n]; *dispatch set when it calls or jumps
 * through a pointer and calls nothing directly: a table of functions is then all it has
 * (Chromium's). One that calls code of its own too has hooks beside it (jemalloc's junk
 * callbacks, glibc's __free_hook in libc_malloc_debug.so). -1: its code cannot be read
 * through. */
static int callees(const struct reach *r, const struct hp_reach_entry *e, uintptr_t *out, int *n,
                   int *dispatch)
{
    int ind_call = 0, direct = 0;
    uintptr_t end = e->fn + (e->size ? e->size : 4096);
    int ended = 0;
    for (uintptr_t at = e->fn; at < end;) {
        struct hp_x86_insn in;
        size_t left = end - at;
        if (!readable(r, at, left < 15 ? left : 15) ||
            !hp_x86_decode((const uint8_t *)at, (int)(left < 15 ? left : 15), &in))
            return ended ? 0 : -1; /* after a ret or a trap: padding, or the trap's operands */
        ended = in.kind == HP_X86_END || in.kind == HP_X86_JMP;
        if (in.indirect)
            ind_call = 1;
        if (in.kind == HP_X86_JMP || in.kind == HP_X86_JCC || in.kind == HP_X86_CALL) {
            uintptr_t t = (uintptr_t)in.target;
            int dup = 0;
            for (int i = 0; i < *n; i++)
                dup |= out[i] == t;
            int outside = (t < e->fn || t >= end) && in_exec(r, t);
            direct |= outside;
            if (outside && !is_entry(r, t) && !plt_stub(r, t) && !dup) {
                if (*n == MAX_INTERNAL)
                    return -1;
                out[(*n)++] = t;
            }
        }
        at += (uintptr_t)in.len;
        if (!e->size && ended)
            break; /* size unknown: its first straight run only */
    }
    if (ind_call && !direct)
        *dispatch = 1;
    return 0;
}

/* The internal free functions: what the entry points that take a block back (free, delete,
 * realloc, ...) call, less what those that hand blocks out call too (locks, size classes,
 * initialisation). -1 (and *why) when an entry point dispatches through a pointer or cannot be
 * read. */
static int internal_frees(struct reach *r, const char **why)
{
    uintptr_t alloc[MAX_INTERNAL];
    int nalloc = 0;
    for (int i = 0; i < r->nent; i++) {
        int dispatch = 0;
        const struct hp_reach_entry *e = &r->ent[i];
        if (e->role == HP_REACH_API)
            continue;
        int frees = e->role == HP_REACH_FREE;
        int rc = frees ? callees(r, e, r->internal, &r->ninternal, &dispatch)
                       : callees(r, e, alloc, &nalloc, &dispatch);
        if (rc != 0) {
            *why = "an entry point's code is more than the patcher can read through";
            return -1;
        }
        if (dispatch && frees) {
            *why = "its free dispatches through a table of functions, which the program can "
                   "also call past the entry points";
            r->bypass = 1;
            return -1;
        }
    }
    int k = 0;
    for (int i = 0; i < r->ninternal; i++) {
        int shared = 0;
        for (int j = 0; j < nalloc; j++)
            shared |= alloc[j] == r->internal[i];
        if (!shared)
            r->internal[k++] = r->internal[i];
    }
    r->ninternal = k;
    return 0;
}

/* Is an internal free function's address stored in the object's data (a table of functions
 * the program may call through, past the entry points)? Its first place, or 0. */
static uintptr_t stored_in_data(const struct reach *r)
{
    if (!r->ninternal)
        return 0;
    for (int i = 0; i < r->nseg; i++) {
        if (r->seg[i].exec)
            continue;
        const uintptr_t *w = (const uintptr_t *)((r->seg[i].lo + 7) & ~(uintptr_t)7);
        const uintptr_t *end = (const uintptr_t *)(r->seg[i].hi & ~(uintptr_t)7);
        for (; w < end; w++)
            if (*w >= r->xlo && *w < r->xhi && is_internal(r, *w) &&
                ((const void *)w < (const void *)r || (const void *)w >= (const void *)(r + 1)))
                return (uintptr_t)w; /* (r itself holds them when this code is in the object) */
    }
    return 0;
}

static int seen(const struct reach *r, uintptr_t a)
{
    uintptr_t o = a - r->xlo;
    return (r->seen[o >> 3] >> (o & 7)) & 1;
}

/* Code at t is reached from the instruction at from: an internal free function ends the walk,
 * an entry point or a call out of the object is not followed, the rest is walked. */
static void reach_to(struct reach *r, uintptr_t t, uintptr_t from)
{
    if (r->found || !in_exec(r, t) || is_entry(r, t) || hp_obj_init_fn(&r->oc, t))
        return;
    if (is_internal(r, t)) {
        r->found = t, r->from = from;
        return;
    }
    if (seen(r, t) || plt_stub(r, t))
        return;
    if (r->nstack == STACK_CAP) {
        r->overflow = 1;
        return;
    }
    r->stack[r->nstack++] = t;
}

/* A switch's jump table at tab, used by the indirect jump at at: 4-byte offsets from the table
 * (position-independent code, after lea tab(%rip)) or 8-byte addresses (jmp *tab(,%reg,8)). */
static void jump_table(struct reach *r, uintptr_t tab, int width, uintptr_t at)
{
    for (int k = 0; k < TABLE_MAX && readable(r, tab + (uintptr_t)k * (uintptr_t)width, (size_t)width); k++) {
        uintptr_t t;
        if (width == 4) {
            int32_t off;
            hp_memcpy(&off, (const void *)(tab + (uintptr_t)k * 4), 4);
            t = tab + (uintptr_t)(intptr_t)off;
        } else {
            hp_memcpy(&t, (const void *)(tab + (uintptr_t)k * 8), 8);
        }
        if (!in_exec(r, t) || (t > at ? t - at : at - t) > ((uintptr_t)1 << 20))
            return;
        reach_to(r, t, at);
    }
}

/* Code pointers in the object's data at x (a table of functions, a C++ vtable, a structure
 * with callbacks that code took the address of), up to DATA_WINDOW words and up to the first
 * word that points nowhere in the object (an end, a number: the structure is over). With
 * depth, a data pointer there is looked through the same way (a pointer to the table). */
static void data_pointers(struct reach *r, uintptr_t x, int depth, uintptr_t at)
{
    x &= ~(uintptr_t)7;
    for (int k = 0; k < DATA_WINDOW && readable(r, x + (uintptr_t)k * 8, 8); k++) {
        uintptr_t v;
        if (hp_obj_init_data(&r->oc, x + (uintptr_t)k * 8))
            continue; /* the initialisers: not walked (roots) */
        hp_memcpy(&v, (const void *)(x + (uintptr_t)k * 8), 8);
        if (in_exec(r, v))
            reach_to(r, v, at);
        else if (!readable(r, v, 8))
            return;
        else if (depth)
            data_pointers(r, v, depth - 1, at);
    }
}

/* One instruction's references to code: a relative branch's target, a code address taken by
 * lea (rip-relative) or mov of an immediate (non-PIE), code pointers in the data it takes the
 * address of or loads from, a jump table. *table: the data address the last lea of this
 * straight run took, a jump table's candidate. */
static void references(struct reach *r, uintptr_t at, const struct hp_x86_insn *in, uintptr_t *table)
{
    const uint8_t *c = (const uint8_t *)at;
    if (in->kind == HP_X86_JMP || in->kind == HP_X86_JCC || in->kind == HP_X86_CALL) {
        uintptr_t t = (uintptr_t)in->target;
        reach_to(r, t, at);
        return;
    }
    if (in->rip_disp >= 2 && (c[in->rip_disp - 2] == 0x8d || c[in->rip_disp - 2] == 0x8b)) {
        /* lea x(%rip), mov x(%rip) */
        int32_t d;
        hp_memcpy(&d, c + in->rip_disp, 4);
        uintptr_t x = at + (uintptr_t)in->len + (uintptr_t)(intptr_t)d;
        if (in_exec(r, x)) {
            reach_to(r, x, at);
        } else if (readable(r, x, 4)) {
            uintptr_t v;
            if (c[in->rip_disp - 2] == 0x8d) { /* its address taken: what it holds */
                *table = x;
                data_pointers(r, x, 0, at);
            } else if (readable(r, x, 8) && !hp_obj_init_data(&r->oc, x)) { /* loaded: the pointer it holds */
                hp_memcpy(&v, (const void *)x, 8);
                if (in_exec(r, v))
                    reach_to(r, v, at);
                else if (readable(r, v, 8))
                    data_pointers(r, v, 0, at);
            }
        }
        return;
    }
    if (in->len >= 5 && in->rip_disp < 0) {
        uint8_t op = c[in->len - 5]; /* mov $imm32, %reg (b8+r) */
        int mov_imm = (op >= 0xb8 && op <= 0xbf) || (in->len >= 6 && c[in->len - 6] == 0xc7);
        uint32_t imm;
        hp_memcpy(&imm, c + in->len - 4, 4);
        if (mov_imm && in_exec(r, imm))
            reach_to(r, imm, at);
    }
    if (in->indirect && in->kind == HP_X86_END) {
        /* jmp *disp32(,%reg,8): ff 24 c5/cd/.. disp32 */
        if (in->len >= 7 && c[in->len - 7] == 0xff && c[in->len - 6] == 0x24 && (c[in->len - 5] & 7) == 5) {
            uint32_t tab;
            hp_memcpy(&tab, c + in->len - 4, 4);
            jump_table(r, tab, 8, at);
        } else if (*table) {
            jump_table(r, *table, 4, at);
        }
    }
}

/* The length of the padding instruction at a (nop in its forms, int3), or 0. */
static int padding(const struct reach *r, uintptr_t a)
{
    struct hp_x86_insn in;
    int avail = code_left(r, a);
    if (!avail || !hp_x86_decode((const uint8_t *)a, avail, &in))
        return 0;
    const uint8_t *c = (const uint8_t *)a;
    int i = 0;
    while (i < in.len - 1 && (c[i] == 0x66 || c[i] == 0x2e))
        i++;
    if (c[i] == 0x90 || c[i] == 0xcc || (i + 1 < in.len && c[i] == 0x0f && c[i + 1] == 0x1f))
        return in.len;
    return 0;
}

/* Does the call whose next instruction would be at a not come back (a call of exit, abort or
 * another function that does not return, last in its function)? Then what follows it,
 * after padding, is the start of another function, and control never falls into it: walking
 * on would take that function as reached (a program's main ending in a call of its error
 * function, followed by jemalloc's constructor in .text.startup). Compilers never fall from
 * one function into the next; a linker that deletes the jump between two basic-block
 * sections could, after a call, and the walk would then miss what follows. */
static int call_ends_function(const struct reach *r, uintptr_t a)
{
    for (int k = 0, len; k < 16 && (len = padding(r, a)) > 0; k++)
        a += (uintptr_t)len;
    return hp_obj_fn_start(&r->oc, a);
}

/* Walk the code reachable from the program's start, never through an entry point, until an
 * internal free function is reached (r->found) or all is seen. */
static int walk(struct reach *r, const char **why)
{
    while (r->nstack && !r->found) {
        uintptr_t at = r->stack[--r->nstack], table = 0;
        while (!r->found && in_exec(r, at) && !seen(r, at)) {
            uintptr_t o = at - r->xlo;
            r->seen[o >> 3] |= (uint8_t)(1u << (o & 7));
            struct hp_x86_insn in;
            if (r->budget-- == 0) {
                *why = "the program is too large to show that every free goes through the entry points";
                return -1;
            }
            if (!hp_x86_decode((const uint8_t *)at, code_left(r, at), &in))
                break; /* code this decoder does not know (AVX): this path ends here */
            references(r, at, &in, &table);
            if (in.kind == HP_X86_END || in.kind == HP_X86_JMP)
                break;
            at += (uintptr_t)in.len;
            if ((in.kind == HP_X86_CALL || (in.indirect && in.kind == HP_X86_PLAIN)) &&
                call_ends_function(r, at))
                break;
        }
    }
    if (r->overflow) {
        *why = "the program is too large to show that every free goes through the entry points";
        return -1;
    }
    return 0;
}

/* Where the walk begins: the program's entry point, which leads to main. Not its initialisers:
 * a linked-in allocator's own (jemalloc's constructor, tcmalloc's static objects) reach its
 * internals as its own entry points do, with blocks of its own. A program linked with the crt
 * of glibc before 2.34 names them from its start (_start passes __libc_csu_init, which runs
 * the init array and _init): the walk follows neither the arrays' entries nor DT_INIT and
 * DT_FINI (reach_to, data_pointers), as libc runs them for newer programs (rustc's jemalloc:
 * its constructor leads to its thread-exit cleanup, which frees its caches). */
static void roots(struct reach *r) { reach_to(r, (uintptr_t)getauxval(AT_ENTRY), 0); }

static char why_buf[200];

int hp_reach_check(const struct hp_reach_entry *ent, int nent, int walk_code, const char **why,
                   int *bypass)
{
    static struct reach r;
    hp_memset(&r, 0, sizeof r);
    *bypass = 0;
    r.ent = ent;
    r.nent = nent;
    if (nent <= 0 || !dl_iterate_phdr(find_object, &r) || r.xhi <= r.xlo) {
        *why = "the allocator's code is in no loaded object";
        return -1;
    }
    if (internal_frees(&r, why) != 0) {
        *bypass = r.bypass;
        return -1;
    }
    uintptr_t slot = stored_in_data(&r);
    if (slot) {
        *bypass = 1;
        hp_fmt(why_buf, sizeof why_buf, "the address of one of its internal free functions "
               "(0x%lx) is stored in its data at 0x%lx, for calls past the entry points",
               (unsigned long)(*(const uintptr_t *)slot - r.bias), (unsigned long)(slot - r.bias));
        *why = why_buf;
        return -1;
    }
    /* A shared library's internal functions are reached from outside it only through what it
     * exports: its allocation entry points, patched, and its other functions (mallctl, ...),
     * which are the allocator's own. A program's code calls them directly. */
    if (!r.is_main || !r.ninternal || !walk_code)
        return 0;
    r.seen_len = ((r.xhi - r.xlo) >> 3) + 1;
    r.seen = mmap(NULL, r.seen_len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    r.stack = mmap(NULL, STACK_CAP * sizeof *r.stack, PROT_READ | PROT_WRITE,
                   MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    int rc = -1;
    if (r.seen == MAP_FAILED || r.stack == MAP_FAILED) {
        *why = "no memory to look through the program's code";
    } else {
        r.budget = WALK_BUDGET;
        roots(&r);
        rc = walk(&r, why);
        if (rc == 0 && r.found) {
            *bypass = 1;
            hp_fmt(why_buf, sizeof why_buf, "the program's code at 0x%lx calls one of its "
                   "internal free functions (0x%lx) past the entry points",
                   (unsigned long)(r.from - r.bias), (unsigned long)(r.found - r.bias));
            *why = why_buf;
            rc = -1;
        }
    }
    if (r.seen != MAP_FAILED && r.seen)
        munmap(r.seen, r.seen_len);
    if (r.stack != MAP_FAILED && r.stack)
        munmap(r.stack, STACK_CAP * sizeof *r.stack);
    return rc;
}

#else

int hp_reach_check(const struct hp_reach_entry *ent, int nent, int walk_code, const char **why,
                   int *bypass)
{
    (void)ent, (void)nent, (void)walk_code;
    *bypass = 0;
    *why = "patching is implemented for x86_64 only";
    return -1;
}

#endif
