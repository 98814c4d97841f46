/* heapprof-report --format memprof: one profile as an LLVM MemProf raw profile (version 2),
 * which llvm-profdata 16 turns into indexed memprof data with --profiled-binary. What LLVM
 * 16 can take is checked first (hr_memprof_check), so a refusal is one line and no output. */
#include <stdlib.h>
#include <string.h>

#include "hr_output.h"
#include "memprof_internal.h"

#define HR_SEG_EXEC 4u /* hpf_segment.prot */

/* The MODULE record of the profiled executable: the one at the executable's path. */
static const struct hr_module *hr_memprof_exe(const struct hr_profile *p)
{
    for (size_t i = 0; i < p->nmodules; i++) {
        const struct hr_module *m = &p->modules[i];
        if (m->path.len == p->executable.len && m->path.len &&
            memcmp(m->path.ptr, p->executable.ptr, m->path.len) == 0)
            return m;
    }
    return NULL;
}

/* A context LLVM can take: it has blocks and a stack. */
static int hr_memprof_wanted(const struct hr_context *c)
{
    return c->has_hib && c->hib.alloc_count > 0 && c->depth > 0;
}

int hr_memprof_check(const struct hr_profile *p, char err[HR_ERR_MAX])
{
    int exe_len = p->executable.len > 200 ? 200 : (int)p->executable.len;
    if (p->diff_base) {
        snprintf(err, HR_ERR_MAX, "--format memprof cannot hold a diff (LLVM's counts are "
                                  "unsigned): export one profile");
        return -1;
    }
    const struct hr_module *exe = hr_memprof_exe(p);
    if (!exe) {
        snprintf(err, HR_ERR_MAX, "--format memprof: the profile has no module for its "
                                  "executable '%.*s'", exe_len, p->executable.ptr);
        return -1;
    }
    /* llvm-profdata 16 symbolises the raw addresses against the binary's own addresses, and
     * refuses a binary whose first PT_LOAD is at address 0: a non-PIE executable, loaded at
     * the addresses it was linked for, is the only kind it reads. */
    if (exe->load_bias != 0) {
        snprintf(err, HR_ERR_MAX, "--format memprof: '%.*s' is a position-independent "
                                  "executable; llvm-profdata 16 reads MemProf profiles of non-PIE "
                                  "binaries only (build with -no-pie -fno-pie)",
                 exe_len, p->executable.ptr);
        return -1;
    }
    for (size_t i = 0; i < p->ncontexts; i++)
        if (hr_memprof_wanted(&p->contexts[i]))
            return 0;
    snprintf(err, HR_ERR_MAX, "--format memprof: the profile has no allocation with a stack");
    return -1;
}

/* Frames LLVM's runtime would write: up to the first 0, as its stack depot ends a trace. */
static uint32_t hr_memprof_depth(const struct hr_context *c)
{
    uint32_t d = 0;
    while (d < c->depth && c->pcs[d] != 0)
        d++;
    return d;
}

static size_t hr_round8(size_t n) { return (n + 7) & ~(size_t)7; }

/* Section sizes, each rounded to 8 as LLVM's runtime does. */
struct hr_memprof_sizes {
    size_t segs, nsegs, mibs, nmibs, stacks;
};

static void hr_memprof_measure(const struct hr_profile *p, struct hr_memprof_sizes *z)
{
    *z = (struct hr_memprof_sizes){0};
    for (size_t i = 0; i < p->nmodules; i++)
        for (uint32_t s = 0; s < p->modules[i].nsegs; s++)
            z->nsegs += (p->modules[i].segs[s].prot & HR_SEG_EXEC) != 0;
    z->stacks = 8;
    for (size_t i = 0; i < p->ncontexts; i++) {
        const struct hr_context *c = &p->contexts[i];
        if (!hr_memprof_wanted(c))
            continue;
        z->nmibs++;
        z->stacks += 16 + 8 * (size_t)hr_memprof_depth(c);
    }
    z->segs = hr_round8(8 + z->nsegs * HR_MEMPROF_SEGMENT_SIZE);
    z->mibs = hr_round8(8 + z->nmibs * (8 + HR_MEMPROF_MIB_SIZE));
    z->stacks = hr_round8(z->stacks);
}

/* The executable segments of every module, as LLVM's runtime lists them from its maps. */
static void hr_memprof_segments(const struct hr_profile *p, size_t n, uint8_t *at)
{
    at = hr_memprof_put64(at, n);
    for (size_t i = 0; i < p->nmodules; i++) {
        const struct hr_module *m = &p->modules[i];
        for (uint32_t s = 0; s < m->nsegs; s++) {
            if (!(m->segs[s].prot & HR_SEG_EXEC))
                continue;
            hr_memprof_put_segment(at, &m->segs[s], m->build_id, m->build_id_len);
            at += HR_MEMPROF_SEGMENT_SIZE;
        }
    }
}

/* MIBs and stacks, keyed by context id (LLVM's stack id). Stack addresses are call sites,
 * not return addresses: LLVM's runtime writes pc - 1 and llvm-profdata symbolises them as
 * they are, so heapprof's return addresses are written minus 1 the same way. */
static void hr_memprof_contexts(const struct hr_profile *p, size_t n, uint8_t *mib,
                                uint8_t *stack)
{
    mib = hr_memprof_put64(mib, n);
    stack = hr_memprof_put64(stack, n);
    for (size_t i = 0; i < p->ncontexts; i++) {
        const struct hr_context *c = &p->contexts[i];
        if (!hr_memprof_wanted(c))
            continue;
        struct hr_mib m;
        hr_memprof_mib(&c->hib, &m);
        mib = hr_memprof_put64(mib, c->context_id);
        hr_memprof_put_mib(mib, &m);
        mib += HR_MEMPROF_MIB_SIZE;
        uint32_t depth = hr_memprof_depth(c);
        stack = hr_memprof_put64(stack, c->context_id);
        stack = hr_memprof_put64(stack, depth);
        for (uint32_t d = 0; d < depth; d++)
            stack = hr_memprof_put64(stack, c->pcs[d] - 1);
    }
}

int hr_write_memprof(FILE *out, const struct hr_profile *p, const struct hr_output_opts *opts)
{
    char err[HR_ERR_MAX];
    if (hr_memprof_check(p, err)) {
        /* cli.c checks before it opens the output; a caller that did not gets the reason
         * here and no bytes. */
        if (opts->warn)
            fprintf(opts->warn, "heapprof-report: %s\n", err);
        return HR_WRITE_REFUSED;
    }
    struct hr_memprof_sizes z;
    hr_memprof_measure(p, &z);
    size_t total = HR_MEMPROF_HEADER_SIZE + z.segs + z.mibs + z.stacks;
    uint8_t *buf = calloc(1, total); /* zeros: the padding between sections */
    if (!buf)
        return -1;
    size_t seg_off = HR_MEMPROF_HEADER_SIZE, mib_off = seg_off + z.segs,
           stack_off = mib_off + z.mibs;
    hr_memprof_put_header(buf, total, seg_off, mib_off, stack_off);
    hr_memprof_segments(p, z.nsegs, buf + seg_off);
    hr_memprof_contexts(p, z.nmibs, buf + mib_off, buf + stack_off);
    fwrite(buf, 1, total, out);
    free(buf);
    return 0;
}
