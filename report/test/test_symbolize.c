/* Unit tests of symbolisation against real code: the test binary describes itself in a MODULE
 * record (segments and load bias from dl_iterate_phdr, build id from its note), then asks for
 * the names of its own functions. Also: build id mismatch, missing files, [vdso], demangling. */
#include <check.h>
#include <dlfcn.h>
#include <elf.h>
#include <elfutils/libdwfl.h>
#include <gelf.h>
#include <link.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "harness.h"
#include "hpf_writer.h"
#include "hr_output.h"
#include "hr_profile.h"
#include "hr_symbolize.h"
#include "self_module.h"

/* Targets: noinline so they exist as real functions with their own symbols. */
__attribute__((noinline)) void hr_test_target(void)
{
    __asm__ volatile("" ::: "memory");
}

static uint64_t captured_ra;

__attribute__((noinline)) static void hr_test_capture(void)
{
    captured_ra = (uint64_t)(uintptr_t)__builtin_return_address(0);
    __asm__ volatile("" ::: "memory");
}

__attribute__((noinline)) void hr_test_caller(void)
{
    hr_test_capture();
    __asm__ volatile("" ::: "memory"); /* keeps the call from becoming a tail call */
}

/* A call inside a function inlined into a function inlined into hr_inl_outer; each line
 * variable names the line of the call it sits above. */
static uint64_t inl_ra;
static int leaf_line, mid_line, outer_line;

__attribute__((noinline)) static void hr_inl_grab(void)
{
    inl_ra = (uint64_t)(uintptr_t)__builtin_return_address(0);
    __asm__ volatile("" ::: "memory");
}

static inline __attribute__((always_inline)) void hr_inl_leaf(void)
{
    leaf_line = __LINE__ + 1;
    hr_inl_grab();
    __asm__ volatile("" ::: "memory");
}

static inline __attribute__((always_inline)) void hr_inl_mid(void)
{
    mid_line = __LINE__ + 1;
    hr_inl_leaf();
    __asm__ volatile("" ::: "memory");
}

__attribute__((noinline)) void hr_inl_outer(void)
{
    outer_line = __LINE__ + 1;
    hr_inl_mid();
    __asm__ volatile("" ::: "memory");
}

/* A profile with the test binary, a missing library, a [vdso] and one stack of `pcs`. */
static struct hr_profile *profile_with(const struct self_module *m, const uint64_t *pcs,
                                       uint32_t depth)
{
    struct ht_buf b = {0};
    ht_file_header(&b);
    struct hpf_process pr = {.pid = (uint32_t)getpid()};
    ht_process(&b, &pr, "glibc", m->path, NULL);
    struct hpf_summary s = {0};
    ht_record(&b, HPF_REC_SUMMARY, &s, sizeof s);
    ht_module(&b, m->bias, m->segs, m->nsegs, m->build_id, m->build_id_len, m->path);
    struct hpf_segment gone = {.start = 0x100000000000ull, .end = 0x100000010000ull, .prot = 5};
    ht_module(&b, 0x100000000000ull, &gone, 1, NULL, 0, "/nonexistent/libgone.so");
    struct hpf_segment vdso = {.start = 0x200000000000ull, .end = 0x200000002000ull, .prot = 5};
    ht_module(&b, 0x200000000000ull, &vdso, 1, NULL, 0, "[vdso]");
    ht_stack(&b, 1, pcs, depth);
    struct hpf_hib h = {.context_id = 1, .alloc_count = 1, .total_size = 10};
    ht_record(&b, HPF_REC_HIB, &h, sizeof h);
    ht_end(&b);
    struct hr_profile *p = malloc(sizeof *p);
    char err[HR_ERR_MAX];
    ck_assert_msg(hr_profile_parse(p, "self.hpf", b.data, b.len, err) == 0, "%s", err);
    return p;
}

static int ends_with(const char *s, const char *suffix)
{
    size_t a = strlen(s), b = strlen(suffix);
    return a >= b && strcmp(s + a - b, suffix) == 0;
}

START_TEST(own_functions)
{
    struct self_module m;
    self_module(&m);
    hr_test_caller();
    /* A fake return address one past the entry of hr_test_target, and a real one. */
    uint64_t pcs[2] = {(uint64_t)(uintptr_t)&hr_test_target + 1, captured_ra};
    struct hr_profile *p = profile_with(&m, pcs, 2);
    FILE *warn = tmpfile();
    struct hr_symbolizer *s = hr_symbolizer_new(p, warn);
    ck_assert_ptr_nonnull(s);
    struct hr_frame f;
    hr_symbolize(s, pcs[0], &f);
    ck_assert_uint_eq(f.pc, pcs[0]);
    ck_assert_str_eq(f.function, "hr_test_target");
    ck_assert_msg(ends_with(f.file, "report/test/test_symbolize.c"), "file %s", f.file);
    ck_assert_int_gt(f.line, 0);
    ck_assert_str_eq(f.module, m.path);

    hr_symbolize(s, pcs[1], &f);
    ck_assert_str_eq(f.function, "hr_test_caller");
    ck_assert_msg(ends_with(f.file, "test_symbolize.c"), "file %s", f.file);

    /* cached: same strings the second time */
    struct hr_frame again;
    hr_symbolize(s, pcs[1], &again);
    ck_assert_ptr_eq(again.function, f.function);
    /* No frame in the missing library yet: no warning. */
    fflush(warn);
    ck_assert_int_eq(ftell(warn), 0);
    /* Its frames keep the module's name; the first of them brings one warning line. */
    hr_symbolize(s, 0x100000000100ull, &f);
    ck_assert_str_eq(f.module, "/nonexistent/libgone.so");
    ck_assert_str_eq(f.function, "");
    hr_symbolize(s, 0x100000000200ull, &f);

    hr_symbolizer_free(s);
    /* The missing library is one warning line; the test binary and [vdso] none. */
    char *w = ht_slurp(warn);
    ck_assert_msg(strcmp(w, "heapprof-report: warning: self.hpf: /nonexistent/libgone.so: cannot "
                            "read it (No such file or directory); its frames keep their "
                            "addresses\n") == 0,
                  "unexpected warnings: %s", w);
    free(w);
    fclose(warn);
    hr_profile_free(p);
    free(p);
}
END_TEST

START_TEST(build_id_mismatch_warns_once)
{
    struct self_module m;
    self_module(&m);
    ck_assert_msg(m.build_id_len > 0, "test binary has no build id");
    m.build_id[0] ^= 0xff;
    uint64_t pcs[2] = {(uint64_t)(uintptr_t)&hr_test_target + 1,
                       (uint64_t)(uintptr_t)&hr_test_caller + 1};
    struct hr_profile *p = profile_with(&m, pcs, 2);
    FILE *warn = tmpfile();
    struct hr_symbolizer *s = hr_symbolizer_new(p, warn);
    struct hr_frame f;
    hr_symbolize(s, pcs[0], &f);
    ck_assert_str_eq(f.function, "hr_test_target"); /* still symbolised */
    hr_symbolize(s, pcs[1], &f);
    ck_assert_str_eq(f.function, "hr_test_caller");
    hr_symbolizer_free(s);
    char *w = ht_slurp(warn);
    char *first = strstr(w, "build id differs");
    ck_assert_msg(first, "no warning in '%s'", w);
    ck_assert_ptr_null(strstr(first + 1, "build id differs"));
    ck_assert(strstr(w, "heapprof-report: warning: self.hpf: "));
    free(w);
    fclose(warn);
    hr_profile_free(p);
    free(p);
}
END_TEST

START_TEST(missing_file_vdso_and_unmapped)
{
    struct self_module m;
    self_module(&m);
    uint64_t pcs[4] = {0x100000000123ull, 0x200000000456ull, 0x300000000000ull, 0};
    struct hr_profile *p = profile_with(&m, pcs, 4);
    struct hr_symbolizer *s = hr_symbolizer_new(p, NULL);
    struct hr_frame f;
    hr_symbolize(s, pcs[0], &f);
    ck_assert_str_eq(f.module, "/nonexistent/libgone.so");
    ck_assert_str_eq(f.function, "");
    ck_assert_str_eq(f.file, "");
    ck_assert_int_eq(f.line, 0);
    hr_symbolize(s, pcs[1], &f);
    ck_assert_str_eq(f.module, "[vdso]");
    ck_assert_str_eq(f.function, "");
    hr_symbolize(s, pcs[2], &f);
    ck_assert_str_eq(f.module, "");
    ck_assert_uint_eq(f.pc, 0x300000000000ull);
    hr_symbolize(s, 0, &f);
    ck_assert_str_eq(f.module, "");
    hr_symbolizer_free(s);
    hr_profile_free(p);
    free(p);
}
END_TEST

/* One file in two MODULE records with the same load bias (node remaps part of its own text
 * and the shim saw two mappings of /usr/bin/node): both resolve, and libdwfl is not handed the
 * same file twice over overlapping addresses (that crashed inside libelf). */
START_TEST(same_file_twice)
{
    struct self_module m;
    self_module(&m);
    hr_test_caller();
    uint64_t pcs[2] = {(uint64_t)(uintptr_t)&hr_test_target + 1, captured_ra};
    struct ht_buf b = {0};
    ht_file_header(&b);
    struct hpf_process pr = {.pid = (uint32_t)getpid()};
    ht_process(&b, &pr, "glibc", m.path, NULL);
    struct hpf_summary sm = {0};
    ht_record(&b, HPF_REC_SUMMARY, &sm, sizeof sm);
    /* The first record has every segment but the executable one, the second only that. */
    struct hpf_segment rest[16];
    uint32_t nrest = 0, x = 0;
    for (uint32_t i = 0; i < m.nsegs; i++) {
        if (m.segs[i].prot & 4)
            x = i;
        else
            rest[nrest++] = m.segs[i];
    }
    ht_module(&b, m.bias, rest, nrest, m.build_id, m.build_id_len, m.path);
    ht_module(&b, m.bias, &m.segs[x], 1, m.build_id, m.build_id_len, m.path);
    ht_stack(&b, 1, pcs, 2);
    struct hpf_hib h = {.context_id = 1, .alloc_count = 1, .total_size = 10};
    ht_record(&b, HPF_REC_HIB, &h, sizeof h);
    ht_end(&b);
    struct hr_profile p;
    char err[HR_ERR_MAX];
    ck_assert_msg(hr_profile_parse(&p, "twice.hpf", b.data, b.len, err) == 0, "%s", err);
    struct hr_symbolizer *s = hr_symbolizer_new(&p, NULL);
    ck_assert_ptr_nonnull(s);
    struct hr_frame f;
    hr_symbolize(s, pcs[0], &f);
    ck_assert_str_eq(f.function, "hr_test_target");
    ck_assert_str_eq(f.module, m.path);
    hr_symbolize(s, pcs[1], &f);
    ck_assert_str_eq(f.function, "hr_test_caller");
    hr_symbolizer_free(s);
    hr_profile_free(&p);
}
END_TEST

/* Two profiles of one program, its code loaded at different places (ASLR): the file is read
 * once for both, each profile's addresses resolve through its own load bias, and a file that
 * cannot be read is said once per profile. After hr_symbolizer_release it is read again. */
START_TEST(shared_across_profiles)
{
    struct self_module m, m2;
    self_module(&m);
    hr_test_caller();
    uint64_t pcs[2] = {(uint64_t)(uintptr_t)&hr_test_target + 1, captured_ra};
    const uint64_t delta = 0x10000000000ull;
    m2 = m;
    m2.bias += delta;
    for (uint32_t i = 0; i < m2.nsegs; i++) {
        m2.segs[i].start += delta;
        m2.segs[i].end += delta;
    }
    uint64_t pcs2[2] = {pcs[0] + delta, pcs[1] + delta};
    struct hr_profile *p = profile_with(&m, pcs, 2), *p2 = profile_with(&m2, pcs2, 2);
    FILE *warn = tmpfile();
    ck_assert_uint_eq(hr_symbolizer_files(), 0);
    struct hr_symbolizer *s = hr_symbolizer_new(p, warn);
    struct hr_frame f, g;
    hr_symbolize(s, pcs[1], &f);
    ck_assert_str_eq(f.function, "hr_test_caller");
    int line = f.line;
    size_t files = hr_symbolizer_files();
    ck_assert_uint_eq(files, 2); /* the test binary and the missing library */
    struct hr_symbolizer *s2 = hr_symbolizer_new(p2, warn);
    hr_symbolize(s2, pcs2[0], &g);
    ck_assert_str_eq(g.function, "hr_test_target");
    ck_assert_uint_eq(g.pc, pcs2[0]);
    hr_symbolize(s2, pcs2[1], &g);
    ck_assert_str_eq(g.function, "hr_test_caller");
    ck_assert_int_eq(g.line, line);
    ck_assert_str_eq(g.file, f.file);
    ck_assert_uint_eq(hr_symbolizer_files(), files);
    /* each profile's address of the other's code is no code of its own */
    hr_symbolize(s2, pcs[1], &g);
    ck_assert_str_eq(g.function, "");
    hr_symbolize(s, 0x100000000100ull, &f); /* a frame in the missing library, in each */
    hr_symbolize(s2, 0x100000000100ull, &g);
    hr_symbolizer_free(s);
    hr_symbolizer_free(s2);
    char *w = ht_slurp(warn);
    const char *gone = "/nonexistent/libgone.so: cannot read it";
    char *first = strstr(w, gone);
    ck_assert_msg(first && strstr(first + 1, gone) && !strstr(strstr(first + 1, gone) + 1, gone),
                  "expected the missing library twice: %s", w);
    free(w);
    fclose(warn);
    hr_symbolizer_release();
    ck_assert_uint_eq(hr_symbolizer_files(), 0);
    s = hr_symbolizer_new(p2, NULL);
    hr_symbolize(s, pcs2[0], &g);
    ck_assert_str_eq(g.function, "hr_test_target");
    ck_assert_uint_eq(hr_symbolizer_files(), 2);
    hr_symbolizer_free(s);
    hr_symbolizer_release();
    hr_profile_free(p);
    hr_profile_free(p2);
    free(p);
    free(p2);
}
END_TEST

/* A loaded object as a module of its own, found by dl_iterate_phdr by a part of its name
 * (m->path holds that part on the way in). */
static int named_cb(struct dl_phdr_info *info, size_t size, void *arg)
{
    struct self_module *m = arg;
    if (!info->dlpi_name || !strstr(info->dlpi_name, m->path))
        return 0;
    for (int i = 0; i < info->dlpi_phnum && m->nsegs < 16; i++) {
        const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
        if (ph->p_type == PT_LOAD) {
            uint64_t start = info->dlpi_addr + ph->p_vaddr;
            m->segs[m->nsegs++] = (struct hpf_segment){
                .start = start, .end = start + ph->p_memsz, .offset = ph->p_offset,
                .prot = (ph->p_flags & PF_X ? 5 : 1)};
        }
    }
    m->bias = info->dlpi_addr;
    snprintf(m->path, sizeof m->path, "%s", info->dlpi_name);
    return 1;
}

/* The loaded object whose name holds `part`, as a module. */
static void named_module(struct self_module *m, const char *part)
{
    memset(m, 0, sizeof *m);
    snprintf(m->path, sizeof m->path, "%s", part);
    dl_iterate_phdr(named_cb, m);
    ck_assert_msg(m->nsegs > 0, "%s not found among the loaded objects", part);
}

/* A module described to libdwfl and, in a one-module profile, to the report's symbolizer. */
struct dwfl_pair {
    Dwfl *dwfl;
    Dwfl_Module *mod;
    struct ht_buf b;
    struct hr_profile p;
    struct hr_symbolizer *s;
};

static void dwfl_pair_open(struct dwfl_pair *d, const struct self_module *m)
{
    static const Dwfl_Callbacks cb = {
        .find_elf = dwfl_build_id_find_elf,
        .find_debuginfo = dwfl_standard_find_debuginfo,
        .section_address = dwfl_offline_section_address,
    };
    memset(d, 0, sizeof *d);
    d->dwfl = dwfl_begin(&cb);
    dwfl_report_begin(d->dwfl);
    d->mod = dwfl_report_elf(d->dwfl, m->path, m->path, -1, m->bias, true);
    dwfl_report_end(d->dwfl, NULL, NULL);
    ck_assert_ptr_nonnull(d->mod);
    ht_file_header(&d->b);
    struct hpf_process pr = {.pid = 1};
    ht_process(&d->b, &pr, "glibc", "/bin/true", NULL);
    struct hpf_summary sum = {0};
    ht_record(&d->b, HPF_REC_SUMMARY, &sum, sizeof sum);
    ht_module(&d->b, m->bias, m->segs, m->nsegs, NULL, 0, m->path);
    ht_end(&d->b);
    char err[HR_ERR_MAX];
    ck_assert_msg(hr_profile_parse(&d->p, "module.hpf", d->b.data, d->b.len, err) == 0, "%s", err);
    d->s = hr_symbolizer_new(&d->p, NULL);
    ck_assert_ptr_nonnull(d->s);
}

static void dwfl_pair_close(struct dwfl_pair *d)
{
    hr_symbolizer_free(d->s);
    hr_profile_free(&d->p);
    dwfl_end(d->dwfl);
}

/* The report's own symbol search (a sorted table per module) names every address of libc as
 * libdwfl's dwfl_module_addrname does: the start, middle and last byte of every symbol with a
 * size, and the byte after each, which may lie in no symbol. */
START_TEST(names_agree_with_libdwfl)
{
    struct self_module m;
    named_module(&m, "/libc.so");
    struct dwfl_pair d;
    dwfl_pair_open(&d, &m);
    Dwfl_Module *mod = d.mod;
    struct hr_symbolizer *s = d.s;
    int nsyms = dwfl_module_getsymtab(mod);
    ck_assert_int_gt(nsyms, 100);
    int checked = 0;
    for (int i = 1; i < nsyms; i++) {
        GElf_Sym sym;
        GElf_Addr addr;
        GElf_Word shndx;
        if (!dwfl_module_getsym_info(mod, i, &sym, &addr, &shndx, NULL, NULL) || !sym.st_size ||
            GELF_ST_TYPE(sym.st_info) != STT_FUNC)
            continue;
        uint64_t probes[4] = {addr, addr + sym.st_size / 2, addr + sym.st_size - 1,
                              addr + sym.st_size};
        for (int k = 0; k < 4; k++) {
            const char *want = dwfl_module_addrname(mod, probes[k]);
            struct hr_frame f;
            hr_symbolize(s, probes[k] + 1, &f); /* a return address: pc - 1 is looked up */
            /* The symbol names the function the code is in: the last of an inlined chain. */
            const struct hr_frame *g = &f;
            while (g->next)
                g = g->next;
            ck_assert_msg(strcmp(g->function, want ? want : "") == 0,
                          "%#llx (%s + %d/4): report says '%s', libdwfl '%s'",
                          (unsigned long long)probes[k], dwfl_module_getsym_info(mod, i, &sym,
                          &addr, &shndx, NULL, NULL), k, g->function, want ? want : "");
            checked++;
        }
    }
    ck_assert_int_gt(checked, 1000);
    dwfl_pair_close(&d);
}
END_TEST

/* A stripped shared object with a version script (report/test/symtest_lib.c): its only
 * symbols are .dynsym's, among them one absolute symbol (value 0) per version node, and its
 * PLT lies below every function symbol. Every byte of its code is named as libdwfl names it;
 * in particular the PLT is not named after a version node (Debian's libgnutls would be, were
 * absolute symbols kept in the report's table). */
START_TEST(versioned_stripped_object)
{
    void *lib = dlopen(HR_SYMTEST_LIB, RTLD_NOW);
    ck_assert_msg(lib != NULL, "%s", dlerror());
    struct self_module m;
    named_module(&m, "/libsymtest.so");
    struct dwfl_pair d;
    dwfl_pair_open(&d, &m);
    /* The fixture is what it should be: absolute symbols, and code below the first function. */
    int nsyms = dwfl_module_getsymtab(d.mod), nabs = 0;
    uint64_t first_func = UINT64_MAX;
    for (int i = 1; i < nsyms; i++) {
        GElf_Sym sym;
        GElf_Addr addr;
        GElf_Word shndx;
        if (!dwfl_module_getsym_info(d.mod, i, &sym, &addr, &shndx, NULL, NULL))
            continue;
        nabs += shndx == SHN_ABS;
        if (GELF_ST_TYPE(sym.st_info) == STT_FUNC && shndx != SHN_UNDEF && addr < first_func)
            first_func = addr;
    }
    ck_assert_int_ge(nabs, 2);
    int below = 0, named = 0;
    for (uint32_t i = 0; i < m.nsegs; i++) {
        if (!(m.segs[i].prot & 4))
            continue;
        for (uint64_t a = m.segs[i].start; a < m.segs[i].end; a++) {
            const char *want = dwfl_module_addrname(d.mod, a);
            struct hr_frame f;
            hr_symbolize(d.s, a + 1, &f); /* a return address: pc - 1 is looked up */
            ck_assert_msg(strcmp(f.function, want ? want : "") == 0,
                          "%#llx: report says '%s', libdwfl '%s'", (unsigned long long)a,
                          f.function, want ? want : "");
            below += a < first_func;
            named += want != NULL;
            ck_assert_msg(!want || strncmp(want, "SYMTEST_", 8) != 0, "%#llx named %s",
                          (unsigned long long)a, want);
        }
    }
    ck_assert_int_gt(below, 64); /* .init and .plt */
    ck_assert_int_gt(named, 64); /* its functions' bytes: 77 built by clang, more by gcc */
    dwfl_pair_close(&d);
    dlclose(lib);
}
END_TEST

START_TEST(text_and_json_frames)
{
    struct self_module m;
    self_module(&m);
    uint64_t pcs[2] = {(uint64_t)(uintptr_t)&hr_test_target + 1, 0x100000000123ull};
    struct hr_profile *p = profile_with(&m, pcs, 2);
    struct hr_output_opts opts = {.sort = HR_SORT_TOTAL_SIZE, .top = 20};
    FILE *f = tmpfile();
    ck_assert_int_eq(hr_write_text(f, &p, 1, &opts), 0);
    char *out = ht_slurp(f);
    fclose(f);
    char *line = strstr(out, "#0  hr_test_target (");
    ck_assert_msg(line, "no frame line in:\n%s", out);
    ck_assert(strstr(line, "test_symbolize.c:"));
    ck_assert(strstr(out, "#1  0x100000000123 [/nonexistent/libgone.so]\n"));
    free(out);
    f = tmpfile();
    ck_assert_int_eq(hr_write_json(f, &p, 1, &opts), 0);
    out = ht_slurp(f);
    fclose(f);
    ck_assert(strstr(out, "\"function\": \"hr_test_target\", \"file\": \""));
    ck_assert(strstr(out, "{\"address\": \"0x100000000123\", \"module\": "
                          "\"/nonexistent/libgone.so\", \"function\": \"\""));
    free(out);
    hr_profile_free(p);
    free(p);
}
END_TEST

START_TEST(inlined_frames)
{
    struct self_module m;
    self_module(&m);
    hr_inl_outer();
    uint64_t pcs[2] = {inl_ra, (uint64_t)(uintptr_t)&hr_test_target + 1};
    struct hr_profile *p = profile_with(&m, pcs, 2);
    struct hr_symbolizer *s = hr_symbolizer_new(p, NULL);
    ck_assert_ptr_nonnull(s);
    struct hr_frame f;
    hr_symbolize(s, pcs[0], &f);
    /* Innermost first: the two inlined functions, each at its call, then the real one. */
    ck_assert_str_eq(f.function, "hr_inl_leaf");
    ck_assert_int_eq(f.inlined, 1);
    ck_assert_int_eq(f.line, leaf_line);
    ck_assert_msg(ends_with(f.file, "test_symbolize.c"), "file %s", f.file);
    const struct hr_frame *g = f.next;
    ck_assert_ptr_nonnull(g);
    ck_assert_str_eq(g->function, "hr_inl_mid");
    ck_assert_int_eq(g->inlined, 1);
    ck_assert_int_eq(g->line, mid_line);
    ck_assert_msg(ends_with(g->file, "test_symbolize.c"), "file %s", g->file);
    ck_assert_uint_eq(g->pc, pcs[0]);
    ck_assert_str_eq(g->module, m.path);
    g = g->next;
    ck_assert_ptr_nonnull(g);
    ck_assert_str_eq(g->function, "hr_inl_outer");
    ck_assert_int_eq(g->inlined, 0);
    ck_assert_int_eq(g->line, outer_line);
    ck_assert_ptr_null(g->next);
    /* A function with nothing inlined at the address: one frame. */
    hr_symbolize(s, pcs[1], &f);
    ck_assert_str_eq(f.function, "hr_test_target");
    ck_assert_int_eq(f.inlined, 0);
    ck_assert_ptr_null(f.next);
    hr_symbolizer_free(s);

    /* Both outputs give every function a frame of its own. */
    struct hr_output_opts opts = {.sort = HR_SORT_TOTAL_SIZE, .top = 20};
    FILE *out = tmpfile();
    ck_assert_int_eq(hr_write_text(out, &p, 1, &opts), 0);
    char *t = ht_slurp(out);
    fclose(out);
    ck_assert_msg(strstr(t, "#0  hr_inl_leaf (") && strstr(t, "#1  hr_inl_mid (") &&
                      strstr(t, "#2  hr_inl_outer (") && strstr(t, "#3  hr_test_target ("),
                  "frames in:\n%s", t);
    ck_assert_msg(strstr(strstr(t, "#1  hr_inl_mid ("), "(inlined)\n"), "%s", t);
    ck_assert_msg(!strstr(strstr(t, "#2  hr_inl_outer ("), "(inlined)"), "%s", t);
    free(t);
    out = tmpfile();
    ck_assert_int_eq(hr_write_json(out, &p, 1, &opts), 0);
    t = ht_slurp(out);
    fclose(out);
    char *mid = strstr(t, "\"function\": \"hr_inl_mid\", \"file\": \"");
    ck_assert_msg(mid, "%s", t);
    char want[64];
    snprintf(want, sizeof want, "\"line\": %d, \"inlined\": true}", mid_line);
    char *end = strchr(mid, '}'), *at = strstr(mid, want);
    ck_assert_msg(at && at < end, "no %s in %s", want, mid);
    ck_assert_msg(strstr(t, "\"function\": \"hr_inl_outer\""), "%s", t);
    ck_assert_msg(strstr(strstr(t, "\"function\": \"hr_inl_outer\""), "\"inlined\": false}"), "%s", t);
    free(t);
    hr_profile_free(p);
    free(p);
}
END_TEST

START_TEST(demangling)
{
    char *d = hr_demangle("_ZN3foo3barEi");
    ck_assert_ptr_nonnull(d);
    ck_assert_str_eq(d, "foo::bar(int)");
    free(d);
    ck_assert_ptr_null(hr_demangle("main"));
    ck_assert_ptr_null(hr_demangle("_Z"));
    ck_assert_ptr_null(hr_demangle(""));
}
END_TEST

/* hr_demangle(name) is want (NULL: left mangled). */
static void dm(const char *name, const char *want)
{
    char *d = hr_demangle(name);
    if (!want) {
        ck_assert_msg(d == NULL, "%s demangled to %s", name, d ? d : "");
        return;
    }
    ck_assert_msg(d != NULL, "%s not demangled", name);
    ck_assert_str_eq(d, want);
    free(d);
}

/* Rust's v0 names (the expected forms are binutils' c++filt's, without crate hashes and
 * lifetimes) and legacy ones. */
START_TEST(rust_demangling)
{
    dm("_RNvXsf_NtNtCs5FxD4tM6viY_14rustc_metadata5rmeta7decoderNtB5_21MetadataDecodeContextNtCsjyvvofjlheH_"
       "10rustc_span11SpanDecoder21decode_syntax_context",
       "<rustc_metadata::rmeta::decoder::MetadataDecodeContext as rustc_span::SpanDecoder>::decode_syntax_context");
    /* inherent impl, generic arguments in value and type position, closures, back-references,
     * an instantiating crate */
    dm("_RINvCs3MG2ofusW15_21rustc_data_structures7outlineNCINvMs3_NtNtCsdadwybgsbvk_12rustc_middle9dep_graph5"
       "graphNtBU_12DepGraphData52assert_dep_node_not_yet_allocated_in_current_sessionNtNtCslNYArtu3iFV_5alloc6"
       "string6StringNCINvMs1_BU_B1G_9with_taskNtNtCsjyvvofjlheH_10rustc_span6symbol6SymbolINtCslKGqiwnqz1t_17"
       "rustc_codegen_ssa13ModuleCodegenNtCs59TyybOfEHA_18rustc_codegen_llvm10ModuleLlvmEE0E0uEB5s_",
       "rustc_data_structures::outline::<<rustc_middle::dep_graph::graph::DepGraphData>::assert_dep_node_not_yet_"
       "allocated_in_current_session<alloc::string::String, <rustc_middle::dep_graph::graph::DepGraphData>::with_"
       "task<rustc_span::symbol::Symbol, rustc_codegen_ssa::ModuleCodegen<rustc_codegen_llvm::ModuleLlvm>>::"
       "{closure#0}>::{closure#0}, ()>");
    dm("_RNvXs0_NtCsfoXig8kEbyV_12simd_adler324hashAhj0_NtB7_11Adler32Hash4hash",
       "<[u8; 0] as simd_adler32::Adler32Hash>::hash");
    dm("_RINvNtCsgEmfK2I1SDS_4core3ptr13drop_in_placeINtNtCslNYArtu3iFV_5alloc5boxed3BoxDINtNtNtB4_3ops8"
       "function6FnOnceuEp6OutputuNtNtB4_6marker4SendEL_EECsjrHSEGnQ3l9_3std",
       "core::ptr::drop_in_place::<alloc::boxed::Box<dyn core::ops::function::FnOnce<(), Output = ()> + "
       "core::marker::Send>>");
    dm("_RNvMs3_NtCslNYArtu3iFV_5alloc7raw_vecINtB5_6RawVecTOhFUKCBN_EuENtNtCsjrHSEGnQ3l9_3std5alloc6SystemE8"
       "grow_oneB13_",
       "<alloc::raw_vec::RawVec<(*mut u8, unsafe extern \"C\" fn(*mut u8)), std::alloc::System>>::grow_one");
    dm("_RNSNvMs8_NtCsgEmfK2I1SDS_4core3numo15overflowing_div5reify", "<u128>::overflowing_div::{shim:reify#0}");
    dm("_RINvNtCsbLd7R6uW4Ys_6ruzstd5frame17read_frame_headerQRShEB4_", "ruzstd::frame::read_frame_header::<&mut &[u8]>");
    dm("_RNvXsp_NtCsgEmfK2I1SDS_4core3fmtPNtNtB7_3ffi6c_voidNtB5_5Debug3fmtB7_",
       "<*const core::ffi::c_void as core::fmt::Debug>::fmt");
    /* lifetimes are left out, a list of nothing but lifetimes with them */
    dm("_RINvNtCsgEmfK2I1SDS_4core3ptr13drop_in_placeINtNtCslNYArtu3iFV_5alloc3vec3VecINtNtBL_5boxed3BoxDG_"
       "INtNtNtB4_3ops8function2FnTINtNtNtCsdadwybgsbvk_12rustc_middle2ty7context6TyCtxtL0_EEEp6OutputIB1e_"
       "DINtNtCsa4mAjElOM1d_10rustc_lint6passes12LateLintPassL0_EEL0_ENtNtCs3MG2ofusW15_21rustc_data_"
       "structures6marker7DynSyncNtB4b_7DynSendEL_EEEB3f_",
       "core::ptr::drop_in_place::<alloc::vec::Vec<alloc::boxed::Box<dyn core::ops::function::Fn<(rustc_middle::"
       "ty::context::TyCtxt,), Output = alloc::boxed::Box<dyn rustc_lint::passes::LateLintPass>> + rustc_data_"
       "structures::marker::DynSync + rustc_data_structures::marker::DynSend>>>");
    /* 128-bit constants, negative and positive */
    dm("_RINvMs2_NtCshg5UprtI8ZK_4jiff4spanNtB6_4Span15try_days_rangedINtNtNtB8_4util8rangeint5ri128Knn8000000"
       "0000000000000000000000000_Kn7fffffffffffffffffffffffffffffff_EEB8_",
       "<jiff::span::Span>::try_days_ranged::<jiff::util::rangeint::ri128<-170141183460469231731687303715884105728, "
       "170141183460469231731687303715884105727>>");
    /* suffixes the compiler adds are not shown */
    dm("_RNCNvNtCsjrHSEGnQ3l9_3std5alloc8rust_oom0B5_.llvm.123456", "std::alloc::rust_oom::{closure#0}");
    /* legacy: hash dropped, escapes decoded */
    dm("_ZN3std2rt10lang_start17h0123456789abcdefE", "std::rt::lang_start");
    dm("_ZN4core3ptr85drop_in_place$LT$std..rt..lang_start$LT$$LP$$RP$$GT$..$u7b$$u7b$closure$u7d$$u7d$$GT$"
       "17h0123456789abcdefE",
       "core::ptr::drop_in_place<std::rt::lang_start<()>::{{closure}}>");
    /* C++ names that look alike stay C++ */
    dm("_ZN3foo3barEv", "foo::bar()");
    /* malformed: left mangled, never read past the end */
    dm("_R", NULL);
    dm("_RNvC", NULL);
    dm("_RNvCs_3foo", NULL);
    dm("_RNvC3foo3barX", NULL);
    dm("_RNvB0_3foo", NULL);  /* a back-reference to itself */
    dm("_RNvB9_3foo", NULL);  /* and forward */
    dm("_R0NvC3foo3bar", NULL); /* an encoding version */
    dm("_RNvC999999999999999999999993foo", NULL);
    dm("_ZN3foo17h0123456789abcdefEi", "foo::h0123456789abcdef(int)"); /* parameters: C++ */
    char deep[4096] = "_R";
    size_t n = 2;
    while (n < sizeof deep - 16)
        deep[n++] = 'I';
    memcpy(deep + n, "C3foo", 6);
    dm(deep, NULL); /* nesting beyond the limit */
}
END_TEST

int main(void)
{
    TCase *tc = ht_tcase("report_symbolize", "symbolize", 60);
    tcase_add_test(tc, own_functions);
    tcase_add_test(tc, build_id_mismatch_warns_once);
    tcase_add_test(tc, missing_file_vdso_and_unmapped);
    tcase_add_test(tc, same_file_twice);
    tcase_add_test(tc, shared_across_profiles);
    tcase_add_test(tc, text_and_json_frames);
    tcase_add_test(tc, inlined_frames);
    tcase_add_test(tc, demangling);
    tcase_add_test(tc, rust_demangling);
    tcase_add_test(tc, names_agree_with_libdwfl);
    tcase_add_test(tc, versioned_stripped_object);
    return ht_run();
}
