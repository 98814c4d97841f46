/* Symbolisation of profile addresses: finds the MODULE that mapped a pc, asks libdwfl for the
 * function and source line at pc - 1 and DWARF for the functions inlined there, and caches the
 * answer per pc. Each file is read once for all the profiles of a run (struct hr_sym_file). */
#include <dwarf.h>
#include <errno.h>
#include <elfutils/libdwfl.h>
#include <gelf.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "hr_arrays.h"
#include "hr_symbolize.h"

/* The address range of one compilation unit, for finding source lines without
 * .debug_aranges (see hr_cu_line). */
struct hr_cu_range {
    uint64_t lo, hi; /* DWARF addresses, [lo, hi); lo first: hr_first_above */
    Dwarf_Off die;   /* the unit's DIE */
};

/* The inlined subroutines of one compilation unit, read once (hr_inl_build): for each, its
 * DIE and the inlined subroutine it sits in; and every range of code they cover, so the
 * innermost one at an address is a search, not a walk of the unit's DIEs per address. */
struct hr_inl_node {
    Dwarf_Off die;
    int32_t parent; /* index of the enclosing inlined subroutine; -1: a function's own code */
    uint32_t depth; /* 0 for those directly in a function */
};

struct hr_inl_range {
    uint64_t lo, hi; /* DWARF addresses, [lo, hi); lo first: hr_first_above */
    uint32_t node;
};

struct hr_cu_inl {
    Dwarf *dw; /* where the nodes' DIEs are: the module's, or a split unit's .dwo */
    struct hr_inl_node *nodes;
    size_t nnodes, capnodes;
    struct hr_inl_range *ranges;
    uint64_t *max_hi; /* max_hi[i]: the largest hi of ranges[0..i] */
    size_t nranges, capranges;
    /* The functions' own code: each subprogram's ranges, node an index into sub_dies (for the
     * line a function starts at, pprof's start_line). */
    Dwarf_Off *sub_dies;
    size_t nsub_dies, capsub_dies;
    struct hr_inl_range *subs;
    size_t nsubs, capsubs;
};

/* One symbol of a module's symbol table, for hr_sym_name. */
struct hr_sym {
    uint64_t start, end; /* file addresses; end == start: a symbol without a size */
    const char *name;    /* owned by libdwfl */
    uint32_t index;      /* in the symbol table: the first one wins a tie */
    uint8_t rank;        /* binding: global 2, weak 1, local 0; the higher wins a tie */
};

/* One file's symbols and debug information, read at most once in a run of the tool and shared
 * by the symbolizers of every profile that maps it: a run of a build leaves hundreds of
 * profiles, nearly all with libc, whose compressed debug sections (libc6-dbg) take a tenth of a
 * second to inflate. The file is reported to a Dwfl of its own at bias 0, so every address here
 * is the file's own (its ELF virtual address); a MODULE record's load bias is taken off first.
 * The Dwfl_Module is NULL when the file cannot be read (why says why). */
struct hr_sym_file {
    char *path;
    char *why;
    Dwfl *dwfl;
    Dwfl_Module *dwmod;
    int cus_built; /* cus (below) has been built: NULL/0 when there is nothing to search */
    struct hr_cu_range *cus;
    size_t ncus;
    struct hr_cu_inl **cu_inl; /* per entry of cus: its unit's inlined subroutines, once read */
    Dwarf *dw;
    Dwarf_Addr dwbias; /* file address = DWARF address + dwbias */
    int syms_built;
    struct hr_sym *syms; /* start first (then index) */
    uint64_t *max_end;   /* max_end[i]: the largest end of syms[0..i] */
    size_t nsyms;
    struct hr_sym_file *next;
};

/* Every file read so far (hr_sym_file_get), until hr_symbolizer_release. */
static struct hr_sym_file *hr_files;
static size_t hr_nfiles;

/* One MODULE record of a profile: its file (NULL for "[vdso]" and other pseudo names). */
struct hr_sym_module {
    const struct hr_module *rec;
    char *path; /* NUL-terminated copy of rec->path */
    struct hr_sym_file *file;
    int checked_build_id;
    int warned; /* its file cannot be read, and this profile said so */
};

/* One executable range, for the pc -> module search (start first: hr_first_above). */
struct hr_range {
    uint64_t start, end;
    size_t module;
};

struct hr_cache_entry {
    uint64_t pc;
    int used;
    struct hr_frame frame; /* strings owned: module points into hr_sym_module, others malloc'ed */
};

struct hr_symbolizer {
    const struct hr_profile *profile;
    FILE *warn;
    struct hr_sym_module *mods;
    size_t nmods;
    struct hr_range *ranges;
    size_t nranges;
    struct hr_cache_entry *cache;
    size_t cache_cap, cache_used;
};

static const Dwfl_Callbacks hr_dwfl_callbacks = {
    .find_elf = dwfl_build_id_find_elf,
    .find_debuginfo = dwfl_standard_find_debuginfo,
    .section_address = dwfl_offline_section_address,
};

/* Only real files go to libdwfl; "[vdso]", "[heap]", "" and the like just keep the address. */
static int hr_is_file_path(const char *path)
{
    return path[0] == '/';
}

/* path's file, read now if no profile needed it before; NULL only when out of memory. Only a
 * regular file is opened: a damaged profile may name a FIFO or a device, whose open or read
 * would never end. */
static struct hr_sym_file *hr_sym_file_get(const char *path)
{
    for (struct hr_sym_file *f = hr_files; f; f = f->next)
        if (strcmp(f->path, path) == 0)
            return f;
    struct hr_sym_file *f = calloc(1, sizeof *f);
    if (!f || !(f->path = strdup(path))) {
        free(f);
        return NULL;
    }
    struct stat st;
    const char *why = NULL;
    if (stat(path, &st) != 0)
        why = strerror(errno);
    else if (!S_ISREG(st.st_mode))
        why = "not a regular file";
    else if (!(f->dwfl = dwfl_begin(&hr_dwfl_callbacks)))
        why = dwfl_errmsg(-1);
    if (!why) {
        /* add_p_vaddr = true: libdwfl takes base (0) as the bias, so the module's addresses
         * are the file's own. */
        dwfl_report_begin(f->dwfl);
        f->dwmod = dwfl_report_elf(f->dwfl, path, path, -1, 0, true);
        if (!f->dwmod)
            why = dwfl_errmsg(-1);
        dwfl_report_end(f->dwfl, NULL, NULL);
    }
    if (why && !(f->why = strdup(why)))
        f->why = (char *)"";
    f->next = hr_files;
    hr_files = f;
    hr_nfiles++;
    return f;
}

struct hr_symbolizer *hr_symbolizer_new(const struct hr_profile *p, FILE *warn)
{
    struct hr_symbolizer *s = calloc(1, sizeof *s);
    if (!s)
        return NULL;
    s->profile = p;
    s->warn = warn;
    s->nmods = p->nmodules;
    s->mods = calloc(p->nmodules ? p->nmodules : 1, sizeof *s->mods);
    size_t nranges = 0;
    for (size_t i = 0; i < p->nmodules; i++)
        nranges += p->modules[i].nsegs;
    s->ranges = malloc((nranges ? nranges : 1) * sizeof *s->ranges);
    if (!s->mods || !s->ranges)
        goto oom;
    for (size_t i = 0; i < p->nmodules; i++) {
        const struct hr_module *m = &p->modules[i];
        struct hr_sym_module *sm = &s->mods[i];
        sm->rec = m;
        sm->path = strndup(m->path.ptr ? m->path.ptr : "", m->path.len);
        if (!sm->path)
            goto oom;
        for (uint32_t j = 0; j < m->nsegs; j++)
            s->ranges[s->nranges++] = (struct hr_range){m->segs[j].start, m->segs[j].end, i};
        /* Only real files; a path with an embedded NUL is not the file it claims to be. The
         * same file in several records (a program that remapped part of its own text, as node
         * does; a library loaded twice) is one hr_sym_file. */
        if (!hr_is_file_path(sm->path) || strlen(sm->path) != m->path.len)
            continue;
        size_t j = 0;
        while (j < i && strcmp(s->mods[j].path, sm->path) != 0)
            j++;
        sm->file = j < i ? s->mods[j].file : hr_sym_file_get(sm->path);
    }
    qsort(s->ranges, s->nranges, sizeof *s->ranges, hr_start_cmp);

    s->cache_cap = 1024;
    s->cache = calloc(s->cache_cap, sizeof *s->cache);
    if (!s->cache)
        goto oom;
    return s;
oom:
    hr_symbolizer_free(s);
    return NULL;
}

size_t hr_symbolizer_files(void) { return hr_nfiles; }

/* The module whose segment holds addr, or -1. Segments of a sane profile do not overlap; if a
 * malformed one has overlaps, some lookup may miss, which only costs a symbol. */
static long hr_find_module(const struct hr_symbolizer *s, uint64_t addr)
{
    size_t lo = hr_first_above(s->ranges, s->nranges, sizeof *s->ranges, addr);
    if (lo == 0 || addr >= s->ranges[lo - 1].end)
        return -1;
    return (long)s->ranges[lo - 1].module;
}

/* A file that cannot be read (deleted, moved, another machine's) is one warning line per
 * profile, at the first frame in it: its frames keep their addresses and the module's name,
 * which is no error, and a module no frame lies in (the shim itself, rebuilt while the program
 * ran) is not worth a line. */
static void hr_warn_unreadable(struct hr_symbolizer *s, struct hr_sym_module *m)
{
    if (m->warned)
        return;
    for (size_t i = 0; i < s->nmods; i++)
        if (s->mods[i].file == m->file)
            s->mods[i].warned = 1;
    if (s->warn)
        fprintf(s->warn,
                "heapprof-report: warning: %s: %s: cannot read it (%s); its frames keep "
                "their addresses\n", s->profile->path, m->path, m->file->why);
}

static void hr_check_build_id(struct hr_symbolizer *s, struct hr_sym_module *m)
{
    if (m->checked_build_id)
        return;
    m->checked_build_id = 1;
    const unsigned char *bits;
    GElf_Addr vaddr;
    int len = dwfl_module_build_id(m->file->dwmod, &bits, &vaddr);
    if (len <= 0 || m->rec->build_id_len == 0)
        return; /* nothing to compare */
    if ((uint32_t)len == m->rec->build_id_len && memcmp(bits, m->rec->build_id, (size_t)len) == 0)
        return;
    if (s->warn)
        fprintf(s->warn,
                "heapprof-report: warning: %s: %s: build id differs from the profile's; "
                "the file changed since the run, symbols may be wrong\n",
                s->profile->path, m->path);
}

/* Empty strings stay the shared literal, so hr_free_frame frees exactly the non-empty ones. */
static char *hr_dup(const char *str)
{
    if (!str || !*str)
        return (char *)"";
    char *d = strdup(str);
    return d ? d : (char *)""; /* out of memory: lose the name, keep going */
}

static int hr_cu_cmp(const void *a, const void *b)
{
    const struct hr_cu_range *x = a, *y = b;
    return x->lo < y->lo ? -1 : x->lo > y->lo;
}

/* The ranges of every compilation unit of m, sorted by start. */
static void hr_build_cus(struct hr_sym_file *m)
{
    m->cus_built = 1;
    m->dw = dwfl_module_getdwarf(m->dwmod, &m->dwbias);
    if (!m->dw)
        return;
    size_t cap = 0;
    Dwarf_CU *cu = NULL;
    Dwarf_Die cudie;
    uint8_t unit_type;
    while (dwarf_get_units(m->dw, cu, &cu, NULL, &unit_type, &cudie, NULL) == 0) {
        /* A skeleton (split DWARF, -gsplit-dwarf) has the ranges and the line table; its
         * split unit in the .dwo file has the rest. */
        if (unit_type != DW_UT_compile && unit_type != DW_UT_partial && unit_type != DW_UT_skeleton)
            continue;
        Dwarf_Addr base, lo, hi;
        ptrdiff_t off = 0;
        while ((off = dwarf_ranges(&cudie, off, &base, &lo, &hi)) > 0) {
            if (lo >= hi)
                continue;
            if (hr_grow(&m->cus, &cap, m->ncus, sizeof *m->cus, 64))
                goto done; /* out of memory: search what we have */
            m->cus[m->ncus++] = (struct hr_cu_range){lo, hi, dwarf_dieoffset(&cudie)};
        }
    }
done:
    qsort(m->cus, m->ncus, sizeof *m->cus, hr_cu_cmp);
}

/* Where to search m's units by their own ranges for addr (a file address: hr_sym_file): *a is the
 * DWARF address, and the units to try are m->cus[i - 1] for i from *start down, nearest
 * first, those whose range ends above *a. Ranges of different units do not overlap in sane
 * DWARF; a few are looked back in case. 0 when there is nothing to search. */
#define HR_CU_LOOK_BACK 8
static int hr_cu_start(struct hr_sym_file *m, uint64_t addr, uint64_t *a, size_t *start)
{
    if (!m->cus_built)
        hr_build_cus(m);
    if (!m->ncus || addr < m->dwbias)
        return 0;
    *a = addr - m->dwbias;
    *start = hr_first_above(m->cus, m->ncus, sizeof *m->cus, *a);
    return 1;
}

/* The source line of addr (a file address) when libdwfl finds none: libdwfl's lookup goes
 * through .debug_aranges, which clang does not emit by default, and elfutils before 0.189
 * does not fall back to the units' own ranges. So search those ranges here. */
static Dwarf_Line *hr_cu_line(struct hr_sym_file *m, uint64_t addr)
{
    uint64_t a;
    size_t lo;
    if (!hr_cu_start(m, addr, &a, &lo))
        return NULL;
    for (size_t i = lo; i > 0 && lo - i < HR_CU_LOOK_BACK; i--) {
        const struct hr_cu_range *r = &m->cus[i - 1];
        Dwarf_Die cudie;
        if (a < r->hi && dwarf_offdie(m->dw, r->die, &cudie)) {
            Dwarf_Line *line = dwarf_getsrc_die(&cudie, a);
            if (line)
                return line;
        }
    }
    return NULL;
}

static int hr_inl_range_cmp(const void *a, const void *b)
{
    const struct hr_inl_range *x = a, *y = b;
    return x->lo < y->lo ? -1 : x->lo > y->lo;
}

/* Record the inlined subroutines among die's children and, for the DIEs that can hold code
 * or functions, their descendants; parent: the inlined subroutine they are in (-1: none).
 * Returns -1 when out of memory. */
/* die's ranges of code, each as {lo, hi, node}, added to *arr. -1 when out of memory. */
static int hr_add_ranges(struct hr_inl_range **arr, size_t *n, size_t *cap, Dwarf_Die *die,
                         uint32_t node)
{
    Dwarf_Addr base, lo, hi;
    ptrdiff_t off = 0;
    while ((off = dwarf_ranges(die, off, &base, &lo, &hi)) > 0) {
        if (lo >= hi)
            continue;
        if (hr_grow(arr, cap, *n, sizeof **arr, 64))
            return -1;
        (*arr)[(*n)++] = (struct hr_inl_range){lo, hi, node};
    }
    return 0;
}

static int hr_inl_walk(struct hr_cu_inl *x, Dwarf_Die *die, int32_t parent, uint32_t depth, int level)
{
    Dwarf_Die child;
    if (level > 256 || dwarf_child(die, &child) != 0)
        return 0;
    do {
        int tag = dwarf_tag(&child);
        int32_t p = parent;
        uint32_t d = depth;
        switch (tag) {
        case DW_TAG_inlined_subroutine: {
            if (hr_grow(&x->nodes, &x->capnodes, x->nnodes, sizeof *x->nodes, 64))
                return -1;
            p = (int32_t)x->nnodes;
            d = parent < 0 ? 0 : depth + 1;
            x->nodes[x->nnodes++] = (struct hr_inl_node){dwarf_dieoffset(&child), parent, d};
            if (hr_add_ranges(&x->ranges, &x->nranges, &x->capranges, &child, (uint32_t)p))
                return -1;
            break;
        }
        case DW_TAG_subprogram: /* a function of its own (a nested one too): a new chain */
            p = -1;
            d = 0;
            if (hr_grow(&x->sub_dies, &x->capsub_dies, x->nsub_dies, sizeof *x->sub_dies, 64))
                return -1;
            x->sub_dies[x->nsub_dies] = dwarf_dieoffset(&child);
            if (hr_add_ranges(&x->subs, &x->nsubs, &x->capsubs, &child, (uint32_t)x->nsub_dies++))
                return -1;
            break;
        case DW_TAG_lexical_block: case DW_TAG_namespace: case DW_TAG_class_type:
        case DW_TAG_structure_type: case DW_TAG_union_type: case DW_TAG_module:
        case DW_TAG_try_block: case DW_TAG_catch_block: case DW_TAG_entry_point:
            break;
        default:
            continue; /* no code below variables, types and the like */
        }
        if (hr_inl_walk(x, &child, p, d, level + 1) < 0)
            return -1;
    } while (dwarf_siblingof(&child, &child) == 0);
    return 0;
}

/* The inlined subroutines of the unit of m->cus[i], read at the first address in it. */
static struct hr_cu_inl *hr_inl_build(struct hr_sym_file *m, size_t i)
{
    if (!m->cu_inl) {
        m->cu_inl = calloc(m->ncus, sizeof *m->cu_inl);
        if (!m->cu_inl)
            return NULL;
    }
    if (m->cu_inl[i])
        return m->cu_inl[i];
    struct hr_cu_inl *x = calloc(1, sizeof *x);
    Dwarf_Die cudie, subdie;
    uint8_t unit_type;
    if (!x)
        return NULL;
    x->dw = m->dw;
    int ok = dwarf_offdie(m->dw, m->cus[i].die, &cudie) != NULL;
    if (ok && dwarf_cu_info(cudie.cu, NULL, &unit_type, NULL, &subdie, NULL, NULL, NULL) == 0 &&
        unit_type == DW_UT_skeleton) {
        /* The split unit, if its .dwo was found (else subdie is no DIE: nothing known). */
        ok = dwarf_tag(&subdie) == DW_TAG_compile_unit && (x->dw = dwarf_cu_getdwarf(subdie.cu)) != NULL;
        cudie = subdie;
    }
    if (!ok || hr_inl_walk(x, &cudie, -1, 0, 0) < 0 ||
        (x->nranges && !(x->max_hi = malloc(x->nranges * sizeof *x->max_hi)))) {
        x->nranges = x->nnodes = x->nsubs = 0; /* out of memory or bad DWARF: nothing known here */
    }
    if (x->nranges)
        qsort(x->ranges, x->nranges, sizeof *x->ranges, hr_inl_range_cmp);
    if (x->nsubs)
        qsort(x->subs, x->nsubs, sizeof *x->subs, hr_inl_range_cmp);
    for (size_t k = 0; k < x->nranges; k++)
        x->max_hi[k] = k && x->max_hi[k - 1] > x->ranges[k].hi ? x->max_hi[k - 1] : x->ranges[k].hi;
    /* Every range entry of the same unit shares it. */
    for (size_t k = 0; k < m->ncus; k++)
        if (m->cus[k].die == m->cus[i].die)
            m->cu_inl[k] = x;
    return x;
}

static void hr_inl_free(struct hr_sym_file *m)
{
    if (!m->cu_inl)
        return;
    for (size_t i = 0; i < m->ncus; i++) {
        struct hr_cu_inl *x = m->cu_inl[i];
        if (!x)
            continue;
        for (size_t k = i; k < m->ncus; k++) /* forget every entry that shares it */
            if (m->cu_inl[k] == x)
                m->cu_inl[k] = NULL;
        free(x->nodes);
        free(x->ranges);
        free(x->max_hi);
        free(x->sub_dies);
        free(x->subs);
        free(x);
    }
    free(m->cu_inl);
}

/* The units whose code may hold a file address, nearest first (hr_unit_next): those
 * starting at or below it, HR_CU_LOOK_BACK of them at most, that end above it. */
struct hr_unit_walk {
    struct hr_sym_file *m;
    uint64_t a; /* the address in the module's DWARF terms */
    size_t lo, i;
};

static int hr_unit_walk(struct hr_unit_walk *w, struct hr_sym_file *m, uint64_t addr)
{
    w->m = m;
    if (!hr_cu_start(m, addr, &w->a, &w->lo))
        return 0;
    w->i = w->lo;
    return 1;
}

/* The next such unit's table (built on first use), NULL after the last. */
static struct hr_cu_inl *hr_unit_next(struct hr_unit_walk *w)
{
    while (w->i > 0 && w->lo - w->i < HR_CU_LOOK_BACK) {
        size_t k = --w->i;
        struct hr_cu_inl *x = w->a < w->m->cus[k].hi ? hr_inl_build(w->m, k) : NULL;
        if (x)
            return x;
    }
    return NULL;
}

/* The innermost inlined subroutine whose code holds addr (a file address), with its
 * unit's table in *unit; NULL when addr is in no inlined code. */
static const struct hr_inl_node *hr_inl_at(struct hr_sym_file *m, uint64_t addr, struct hr_cu_inl **unit)
{
    struct hr_unit_walk w;
    struct hr_cu_inl *x;
    if (!hr_unit_walk(&w, m, addr))
        return NULL;
    while ((x = hr_unit_next(&w))) {
        const struct hr_inl_node *best = NULL;
        size_t j = hr_first_above(x->ranges, x->nranges, sizeof *x->ranges, w.a);
        for (; j > 0 && x->max_hi[j - 1] > w.a; j--) {
            const struct hr_inl_range *r = &x->ranges[j - 1];
            if (w.a < r->hi && (!best || x->nodes[r->node].depth > best->depth))
                best = &x->nodes[r->node];
        }
        if (best) {
            *unit = x;
            return best;
        }
    }
    return NULL;
}

/* The line where the function of a subprogram's or inlined subroutine's DIE is declared
 * (through its abstract origin), 0 when unknown. */
static int hr_die_line(Dwarf_Die *die)
{
    int line;
    return dwarf_decl_line(die, &line) == 0 ? line : 0;
}

/* The line where the function whose own code holds addr is declared, 0 when unknown. A nested
 * function's range lies inside its parent's: the range starting last at or below addr that
 * holds it (a few back at most) is the innermost. */
static int hr_sub_line(struct hr_sym_file *m, uint64_t addr)
{
    struct hr_unit_walk w;
    struct hr_cu_inl *x;
    if (!hr_unit_walk(&w, m, addr))
        return 0;
    while ((x = hr_unit_next(&w))) {
        size_t j = hr_first_above(x->subs, x->nsubs, sizeof *x->subs, w.a);
        for (size_t k = 0; j > 0 && k < 8; j--, k++) {
            const struct hr_inl_range *r = &x->subs[j - 1];
            Dwarf_Die die;
            if (w.a < r->hi)
                return dwarf_offdie(x->dw, x->sub_dies[r->node], &die) ? hr_die_line(&die) : 0;
        }
    }
    return 0;
}

#define HR_MAX_INLINED 64 /* deepest chain of inlined functions shown at one address */

/* The name of the function a subprogram or inlined-subroutine DIE stands for: its linkage
 * name demangled (C++ and Rust names then carry their namespaces and types), else its name;
 * both found through the abstract origin or declaration the DIE refers to. */
static char *hr_die_function(Dwarf_Die *die)
{
    Dwarf_Attribute attr;
    const char *name = NULL;
    if (dwarf_attr_integrate(die, DW_AT_linkage_name, &attr) ||
        dwarf_attr_integrate(die, DW_AT_MIPS_linkage_name, &attr))
        name = dwarf_formstring(&attr);
    if (!name && dwarf_attr_integrate(die, DW_AT_name, &attr))
        name = dwarf_formstring(&attr);
    if (!name)
        return hr_dup("");
    char *dem = hr_demangle(name);
    return dem ? dem : hr_dup(name);
}

/* Where the inlined subroutine inl was called from: DW_AT_call_file (an index into its unit's
 * file table) and DW_AT_call_line. */
static void hr_call_site(Dwarf_Die *inl, struct hr_frame *f)
{
    Dwarf_Attribute attr;
    Dwarf_Word v;
    Dwarf_Die cudie;
    Dwarf_Files *files;
    size_t nfiles;
    const char *file = NULL;
    if (dwarf_formudata(dwarf_attr(inl, DW_AT_call_file, &attr), &v) == 0 &&
        dwarf_diecu(inl, &cudie, NULL, NULL) && dwarf_getsrcfiles(&cudie, &files, &nfiles) == 0 &&
        v < nfiles)
        file = dwarf_filesrc(files, v, NULL, NULL);
    f->file = hr_dup(file);
    f->line = dwarf_formudata(dwarf_attr(inl, DW_AT_call_line, &attr), &v) == 0 && v <= INT_MAX ? (int)v : 0;
}

/* f describes addr in m by its symbol and line table. If the code at addr was inlined, make f
 * the innermost inlined function and chain the ones outside it (struct hr_frame). */
static void hr_inline_chain(struct hr_sym_file *m, uint64_t addr, struct hr_frame *f)
{
    struct hr_cu_inl *x = NULL;
    const struct hr_inl_node *n = hr_inl_at(m, addr, &x);
    /* The inlined subroutines at addr, innermost first. */
    Dwarf_Die dies[HR_MAX_INLINED];
    int k = 0;
    for (; n && k < HR_MAX_INLINED && dwarf_offdie(x->dw, n->die, &dies[k]); k++)
        n = n->parent < 0 ? NULL : &x->nodes[n->parent];
    /* Frame i (i < k) is the function of dies[i]; frame k the one the code belongs to, which
     * keeps f's symbol-table name. Frame 0 has f's line (the line table's); each further one
     * the line where it calls the frame inside it. */
    struct hr_frame *outer = NULL;
    for (int i = k; i > 0; i--) {
        struct hr_frame *g = malloc(sizeof *g);
        if (!g)
            break; /* out of memory: a shorter chain */
        *g = *f;
        if (i < k) {
            g->function = hr_die_function(&dies[i]);
            g->start_line = hr_die_line(&dies[i]);
        }
        hr_call_site(&dies[i - 1], g);
        g->inlined = i < k;
        g->next = outer;
        outer = g;
    }
    if (!outer)
        return;
    f->function = hr_die_function(&dies[0]);
    f->start_line = hr_die_line(&dies[0]);
    f->inlined = 1;
    f->next = outer;
}

static int hr_sym_cmp(const void *a, const void *b)
{
    const struct hr_sym *x = a, *y = b;
    if (x->start != y->start)
        return x->start < y->start ? -1 : 1;
    return x->index < y->index ? -1 : x->index > y->index;
}

/* The module's symbols, sorted, once: libdwfl's own address lookup (dwfl_module_addrname)
 * goes through the whole symbol table at every call: 35 s for the 17,600 distinct pcs of a
 * clang profile (libLLVM has 45,000 symbols). */
static void hr_build_syms(struct hr_sym_file *m)
{
    m->syms_built = 1;
    int n = dwfl_module_getsymtab(m->dwmod);
    if (n <= 1)
        return;
    m->syms = malloc((size_t)n * sizeof *m->syms);
    m->max_end = malloc((size_t)n * sizeof *m->max_end);
    if (!m->syms || !m->max_end) {
        free(m->syms);
        free(m->max_end);
        m->syms = NULL;
        m->max_end = NULL;
        return; /* out of memory: libdwfl answers, slowly */
    }
    for (int i = 1; i < n; i++) {
        GElf_Sym sym;
        GElf_Addr addr;
        GElf_Word shndx;
        const char *name = dwfl_module_getsym_info(m->dwmod, i, &sym, &addr, &shndx, NULL, NULL);
        int type = GELF_ST_TYPE(sym.st_info), bind = GELF_ST_BIND(sym.st_info);
        if (!name || !name[0] || shndx == SHN_UNDEF || shndx == SHN_ABS || type == STT_SECTION || type == STT_FILE ||
            type == STT_TLS)
            continue;
        m->syms[m->nsyms++] = (struct hr_sym){addr, addr + sym.st_size, name, (uint32_t)i,
                                              bind == STB_GLOBAL ? 2 : bind == STB_WEAK ? 1 : 0};
    }
    qsort(m->syms, m->nsyms, sizeof *m->syms, hr_sym_cmp);
    for (size_t i = 0; i < m->nsyms; i++)
        m->max_end[i] = i && m->max_end[i - 1] > m->syms[i].end ? m->max_end[i - 1] : m->syms[i].end;
}

/* The name of the function at addr: the symbol with a size that holds it and starts closest
 * below it (of several at that address, the global one, then the first); without one, the
 * closest symbol without a size below it, unless a symbol with a size ends between the two. */
static const char *hr_sym_name(struct hr_sym_file *m, uint64_t addr)
{
    if (!m->syms_built)
        hr_build_syms(m);
    if (!m->syms)
        return dwfl_module_addrname(m->dwmod, addr);
    size_t i = hr_first_above(m->syms, m->nsyms, sizeof *m->syms, addr); /* syms[i - 1] <= addr */
    const struct hr_sym *best = NULL;
    for (size_t j = i; j > 0 && m->max_end[j - 1] > addr; j--) {
        const struct hr_sym *c = &m->syms[j - 1];
        if (best && c->start != best->start)
            break;
        if (c->end > addr && (!best || c->rank >= best->rank))
            best = c;
    }
    if (best)
        return best->name;
    for (size_t j = i; j > 0; j--) {
        const struct hr_sym *c = &m->syms[j - 1];
        if (c->end != c->start)
            return NULL; /* addr lies past this one's end, in no symbol */
        /* Sizeless: the closest, the global one of several at one address. */
        const struct hr_sym *pick = c;
        for (size_t k = j - 1; k > 0 && m->syms[k - 1].start == c->start; k--)
            if (m->syms[k - 1].end == m->syms[k - 1].start && m->syms[k - 1].rank >= pick->rank)
                pick = &m->syms[k - 1];
        return pick->name;
    }
    return NULL;
}

static void hr_lookup(struct hr_symbolizer *s, uint64_t pc, struct hr_frame *f)
{
    f->pc = pc;
    f->module = "";
    f->function = NULL;
    f->file = NULL;
    f->line = 0;
    f->start_line = 0;
    f->inlined = 0;
    f->next = NULL;
    /* A return address points after the call; pc - 1 lies inside the call instruction, so it
     * belongs to the right function and line even when the call was the last instruction. */
    uint64_t addr = pc ? pc - 1 : 0;
    long mi = pc ? hr_find_module(s, addr) : -1;
    struct hr_sym_module *m = mi >= 0 ? &s->mods[mi] : NULL;
    struct hr_sym_file *file = m && m->file && m->file->dwmod ? m->file : NULL;
    /* Where addr is in the file (its own addresses: hr_sym_file). */
    uint64_t fa = m ? addr - m->rec->load_bias : 0;
    if (m)
        f->module = m->path;
    if (m && m->file && m->file->why)
        hr_warn_unreadable(s, m);
    if (file) {
        hr_check_build_id(s, m);
        const char *name = hr_sym_name(file, fa);
        if (name) {
            char *dem = hr_demangle(name);
            f->function = dem ? dem : hr_dup(name);
        }
        Dwfl_Line *line = dwfl_module_getsrc(file->dwmod, fa);
        if (line) {
            int lineno = 0;
            const char *src = dwfl_lineinfo(line, NULL, &lineno, NULL, NULL, NULL);
            if (src) {
                f->file = hr_dup(src);
                f->line = lineno;
            }
        } else {
            Dwarf_Line *dl = hr_cu_line(file, fa);
            int lineno = 0;
            const char *src = dl ? dwarf_linesrc(dl, NULL, NULL) : NULL;
            if (src && dwarf_lineno(dl, &lineno) == 0) {
                f->file = hr_dup(src);
                f->line = lineno;
            }
        }
    }
    if (!f->function)
        f->function = hr_dup("");
    if (!f->file)
        f->file = hr_dup("");
    if (file) {
        f->start_line = hr_sub_line(file, fa);
        hr_inline_chain(file, fa, f);
    }
}

static void hr_free_frame(struct hr_frame *f)
{
    if (*f->function)
        free((char *)f->function);
    if (*f->file)
        free((char *)f->file);
    for (const struct hr_frame *g = f->next; g;) {
        const struct hr_frame *up = g->next;
        if (*g->function)
            free((char *)g->function);
        if (*g->file)
            free((char *)g->file);
        free((struct hr_frame *)g);
        g = up;
    }
}

static size_t hr_pc_slot(uint64_t pc, size_t cap)
{
    return (size_t)((pc * 0x9e3779b97f4a7c15ull) >> 20) & (cap - 1);
}

static void hr_cache_grow(struct hr_symbolizer *s)
{
    size_t cap = s->cache_cap * 2;
    struct hr_cache_entry *c = calloc(cap, sizeof *c);
    if (!c)
        return; /* the old table still works, it just fills up */
    for (size_t i = 0; i < s->cache_cap; i++) {
        if (!s->cache[i].used)
            continue;
        size_t j = hr_pc_slot(s->cache[i].pc, cap);
        while (c[j].used)
            j = (j + 1) & (cap - 1);
        c[j] = s->cache[i];
    }
    free(s->cache);
    s->cache = c;
    s->cache_cap = cap;
}

void hr_symbolize(struct hr_symbolizer *s, uint64_t pc, struct hr_frame *out)
{
    if ((s->cache_used + 1) * 2 > s->cache_cap)
        hr_cache_grow(s);
    if (s->cache_used + 1 >= s->cache_cap) { /* could not grow: answer without caching */
        hr_lookup(s, pc, out);
        /* Leaks the strings of this one frame; only reachable when memory ran out. */
        return;
    }
    size_t j = hr_pc_slot(pc, s->cache_cap);
    while (s->cache[j].used && s->cache[j].pc != pc)
        j = (j + 1) & (s->cache_cap - 1);
    if (!s->cache[j].used) {
        s->cache[j].used = 1;
        s->cache[j].pc = pc;
        hr_lookup(s, pc, &s->cache[j].frame);
        s->cache_used++;
    }
    *out = s->cache[j].frame;
}

void hr_symbolizer_free(struct hr_symbolizer *s)
{
    if (!s)
        return;
    if (s->cache)
        for (size_t i = 0; i < s->cache_cap; i++)
            if (s->cache[i].used)
                hr_free_frame(&s->cache[i].frame);
    free(s->cache);
    if (s->mods)
        for (size_t i = 0; i < s->nmods; i++)
            free(s->mods[i].path);
    free(s->mods);
    free(s->ranges);
    free(s);
}

void hr_symbolizer_release(void)
{
    while (hr_files) {
        struct hr_sym_file *f = hr_files;
        hr_files = f->next;
        if (f->dwfl)
            dwfl_end(f->dwfl);
        hr_inl_free(f);
        free(f->cus);
        free(f->syms);
        free(f->max_end);
        if (f->why && *f->why)
            free(f->why);
        free(f->path);
        free(f);
    }
    hr_nfiles = 0;
}
