/* Reads a .hpf profile into struct hr_profile, checking every length against the bytes that are
 * really there: a malformed file gives one error line, never a bad read; one cut short is read
 * up to the cut (parse_cut.c). */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hr_profile.h"

#include "hr_parse_internal.h"

const void *hr_cur_take(struct hr_cur *c, size_t n)
{
    if (n > c->left)
        return NULL;
    const void *r = c->p;
    c->p += n;
    c->left -= n;
    return r;
}

void hr_err(char err[HR_ERR_MAX], const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err, HR_ERR_MAX, fmt, ap);
    va_end(ap);
}

/* A string: u32 length, bytes, zero padding to 4. The padding may be missing only if the
 * string ends the payload exactly at a 4-byte boundary (never otherwise). */
static int hr_cur_string(struct hr_cur *c, struct hr_str *out)
{
    uint32_t len;
    const void *lp = hr_cur_take(c, sizeof len);
    if (!lp)
        return -1;
    memcpy(&len, lp, sizeof len);
    size_t padded = ((size_t)len + 3) & ~(size_t)3;
    const char *s = hr_cur_take(c, padded);
    if (!s)
        return -1;
    out->ptr = s;
    out->len = len;
    return 0;
}

/* The fixed part of a record of kind what, copied out (payloads need not be aligned). */
int hr_cur_fixed(struct hr_cur *c, void *dst, size_t n, const char *what, uint64_t off,
                 char *err)
{
    const void *src = hr_cur_take(c, n);
    if (!src) {
        hr_err(err, "%s record at offset %llu too short", what, (unsigned long long)off);
        return -1;
    }
    memcpy(dst, src, n);
    return 0;
}

/* The context a record names, created if new; NULL (and the reason in err) for id 0 or when
 * out of memory. where says which record, for the message. */
struct hr_context *hr_context_for(struct hr_profile *p, uint32_t id, char *err,
                                  const char *where)
{
    if (id == 0) {
        hr_err(err, "%s has context id 0", where);
        return NULL;
    }
    struct hr_context *ctx = hr_context_get(p, id);
    if (!ctx)
        hr_err(err, "out of memory");
    return ctx;
}

static const char *hr_type_name(uint32_t type)
{
    switch (type) {
    case HPF_REC_PROCESS: return "PROCESS";
    case HPF_REC_MODULE: return "MODULE";
    case HPF_REC_STACK: return "STACK";
    case HPF_REC_HIB: return "HIB";
    case HPF_REC_LIVE: return "LIVE";
    case HPF_REC_SUMMARY: return "SUMMARY";
    case HPF_REC_END: return "END";
    case HPF_REC_PAD: return "PAD";
    case HPF_REC_FRAMES: return "FRAMES";
    case HPF_REC_STACK_REFS: return "STACK_REFS";
    case HPF_REC_PACKED: return "PACKED";
    case HPF_REC_ACCESS: return "ACCESS";
    case HPF_REC_ACCESS_HIST: return "ACCESS_HIST";
    default: return "unknown";
    }
}

/* Parse state kept across records, for the "at most one" rules. */
struct hr_seen {
    int process, summary, end, access;
};

static int hr_parse_process(struct hr_profile *p, struct hr_cur *c, char *err, uint64_t off)
{
    if (hr_cur_fixed(c, &p->process, sizeof p->process, "PROCESS", off, err))
        return -1;
    /* Each argv string needs at least its 4-byte length: bound argc before allocating. */
    if (p->process.argc > c->left / 4) {
        hr_err(err, "PROCESS record at offset %llu: argc %u does not fit in the record",
               (unsigned long long)off, p->process.argc);
        return -1;
    }
    p->argv = calloc(p->process.argc ? p->process.argc : 1, sizeof *p->argv);
    if (!p->argv) {
        hr_err(err, "out of memory");
        return -1;
    }
    if (hr_cur_string(c, &p->backend) || hr_cur_string(c, &p->executable))
        goto overrun;
    for (uint32_t i = 0; i < p->process.argc; i++)
        if (hr_cur_string(c, &p->argv[i]))
            goto overrun;
    /* The allocator's object is optional: a record written without it ends here. */
    if (c->left && hr_cur_string(c, &p->allocator))
        goto overrun;
    return 0;
overrun:
    hr_err(err, "PROCESS record at offset %llu: string overruns the record",
           (unsigned long long)off);
    return -1;
}

static int hr_parse_module(struct hr_profile *p, struct hr_cur *c, char *err, uint64_t off)
{
    struct hpf_module m;
    if (hr_cur_fixed(c, &m, sizeof m, "MODULE", off, err))
        return -1;
    if (m.nsegs > c->left / sizeof(struct hpf_segment)) {
        hr_err(err, "MODULE record at offset %llu: %u segments do not fit in the record",
               (unsigned long long)off, m.nsegs);
        return -1;
    }
    struct hr_module *mods = realloc(p->modules, (p->nmodules + 1) * sizeof *mods);
    if (!mods) {
        hr_err(err, "out of memory");
        return -1;
    }
    p->modules = mods;
    struct hr_module *mod = &mods[p->nmodules];
    memset(mod, 0, sizeof *mod);
    mod->load_bias = m.load_bias;
    size_t segbytes = (size_t)m.nsegs * sizeof(struct hpf_segment);
    mod->segs = malloc(segbytes ? segbytes : 1);
    if (!mod->segs) {
        hr_err(err, "out of memory");
        return -1;
    }
    p->nmodules++; /* counted now so hr_profile_free releases segs on a later error */
    mod->nsegs = m.nsegs;
    memcpy(mod->segs, hr_cur_take(c, segbytes), segbytes);
    for (uint32_t i = 0; i < m.nsegs; i++) {
        if (mod->segs[i].start > mod->segs[i].end) {
            hr_err(err, "MODULE record at offset %llu: segment %u ends before it starts",
                   (unsigned long long)off, i);
            return -1;
        }
    }
    size_t idpad = ((size_t)m.build_id_len + 3) & ~(size_t)3;
    const uint8_t *id = hr_cur_take(c, idpad);
    if (!id) {
        hr_err(err, "MODULE record at offset %llu: build id overruns the record",
               (unsigned long long)off);
        return -1;
    }
    mod->build_id = id;
    mod->build_id_len = m.build_id_len;
    if (hr_cur_string(c, &mod->path)) {
        hr_err(err, "MODULE record at offset %llu: path overruns the record",
               (unsigned long long)off);
        return -1;
    }
    return 0;
}

static int hr_parse_stack(struct hr_profile *p, struct hr_cur *c, char *err, uint64_t off)
{
    struct hpf_stack s;
    if (hr_cur_fixed(c, &s, sizeof s, "STACK", off, err))
        return -1;
    /* Exact size: a stack is the one record whose length is fully determined by its header. */
    if (c->left / 8 != s.depth || c->left % 8) {
        hr_err(err, "STACK record at offset %llu: depth %u does not match record size %llu",
               (unsigned long long)off, s.depth, (unsigned long long)(c->left + sizeof s));
        return -1;
    }
    char where[64];
    snprintf(where, sizeof where, "STACK record at offset %llu", (unsigned long long)off);
    struct hr_context *ctx = hr_context_for(p, s.context_id, err, where);
    if (!ctx)
        return -1;
    if (ctx->has_stack) {
        hr_err(err, "second stack for context %u (STACK record at offset %llu)", s.context_id,
               (unsigned long long)off);
        return -1;
    }
    ctx->pcs = malloc(s.depth ? (size_t)s.depth * 8 : 1);
    if (!ctx->pcs) {
        hr_err(err, "out of memory");
        return -1;
    }
    memcpy(ctx->pcs, hr_cur_take(c, (size_t)s.depth * 8), (size_t)s.depth * 8);
    ctx->depth = s.depth;
    ctx->has_stack = 1;
    return 0;
}

/* An unsigned LEB128 number of at most 64 bits; -1 when it runs past the payload or is longer. */
static int hr_cur_uleb(struct hr_cur *c, uint64_t *out)
{
    uint64_t v = 0;
    for (unsigned shift = 0; shift < 64; shift += 7) {
        const uint8_t *b = hr_cur_take(c, 1);
        if (!b)
            return -1;
        if (shift == 63 && *b > 1)
            return -1; /* bits past the 64th */
        v |= (uint64_t)(*b & 0x7f) << shift;
        if (!(*b & 0x80)) {
            *out = v;
            return 0;
        }
    }
    return -1;
}

static int hr_parse_frames(struct hr_profile *p, struct hr_cur *c, char *err, uint64_t off)
{
    struct hpf_frames f;
    if (hr_cur_fixed(c, &f, sizeof f, "FRAMES", off, err))
        return -1;
    if (f.first_node != p->nnodes + 1) {
        hr_err(err, "FRAMES record at offset %llu starts at node %u, but %zu nodes precede it",
               (unsigned long long)off, f.first_node, p->nnodes);
        return -1;
    }
    /* Every node takes at least two bytes: bound count before allocating. */
    if (f.count > c->left / 2 || f.count > UINT32_MAX - 1 - p->nnodes) {
        hr_err(err, "FRAMES record at offset %llu: %u nodes do not fit in the record",
               (unsigned long long)off, f.count);
        return -1;
    }
    size_t need = p->nnodes + f.count + 1;
    if (need > p->nodes_cap) {
        size_t cap = p->nodes_cap ? p->nodes_cap : 1024;
        while (cap < need)
            cap *= 2;
        uint64_t *pcs = realloc(p->node_pc, cap * sizeof *pcs);
        if (pcs)
            p->node_pc = pcs;
        uint32_t *par = pcs ? realloc(p->node_parent, cap * sizeof *par) : NULL;
        if (!par) {
            hr_err(err, "out of memory");
            return -1;
        }
        p->node_parent = par;
        p->nodes_cap = cap;
        p->node_pc[0] = 0;
        p->node_parent[0] = 0;
    }
    uint64_t pc = 0;
    for (uint32_t i = 0; i < f.count; i++) {
        size_t id = p->nnodes + 1;
        uint64_t up, zz;
        if (hr_cur_uleb(c, &up) || hr_cur_uleb(c, &zz)) {
            hr_err(err, "FRAMES record at offset %llu: node %zu overruns the record or is "
                   "badly encoded", (unsigned long long)off, id);
            return -1;
        }
        if (up == 0 || up > id) {
            hr_err(err, "FRAMES record at offset %llu: node %zu has parent distance %llu "
                   "(must be 1..%zu)", (unsigned long long)off, id, (unsigned long long)up, id);
            return -1;
        }
        pc += hpf_unzigzag(zz);
        p->node_pc[id] = pc;
        p->node_parent[id] = (uint32_t)(id - up);
        p->nnodes = id;
    }
    if (c->left) {
        hr_err(err, "FRAMES record at offset %llu: %zu bytes after its %u nodes",
               (unsigned long long)off, c->left, f.count);
        return -1;
    }
    return 0;
}

static int hr_parse_stack_refs(struct hr_profile *p, struct hr_cur *c, char *err, uint64_t off)
{
    struct hpf_stack_refs h;
    if (hr_cur_fixed(c, &h, sizeof h, "STACK_REFS", off, err))
        return -1;
    if (c->left % sizeof(struct hpf_stack_ref) || c->left / sizeof(struct hpf_stack_ref) != h.count) {
        hr_err(err, "STACK_REFS record at offset %llu: count %u does not match record size %llu",
               (unsigned long long)off, h.count, (unsigned long long)(c->left + sizeof h));
        return -1;
    }
    for (uint32_t i = 0; i < h.count; i++) {
        struct hpf_stack_ref r;
        memcpy(&r, hr_cur_take(c, sizeof r), sizeof r);
        char where[96];
        snprintf(where, sizeof where, "STACK_REFS record at offset %llu: entry %u",
                 (unsigned long long)off, i);
        struct hr_context *ctx = hr_context_for(p, r.context_id, err, where);
        if (!ctx)
            return -1;
        if (ctx->has_stack) {
            hr_err(err, "second stack for context %u (STACK_REFS record at offset %llu)",
                   r.context_id, (unsigned long long)off);
            return -1;
        }
        ctx->has_stack = 1;
        ctx->stack_by_ref = 1;
        ctx->stack_node = r.node;
    }
    return 0;
}

/* After the last record: the stacks of contexts named in STACK_REFS, from the frame tree
 * (records may come in any order, so the nodes are known only now). */
static int hr_resolve_stacks(struct hr_profile *p, int cut, char *err)
{
    for (size_t i = 0; i < p->ncontexts; i++) {
        struct hr_context *ctx = &p->contexts[i];
        if (!ctx->stack_by_ref)
            continue;
        if (ctx->stack_node > p->nnodes && cut) {
            /* Its node was in a FRAMES record the cut took: the context has no stack. */
            ctx->has_stack = 0;
            ctx->stack_by_ref = 0;
            continue;
        }
        if (ctx->stack_node > p->nnodes) {
            hr_err(err, "context %u's stack is node %u of the frame tree, which has %zu nodes",
                   ctx->context_id, ctx->stack_node, p->nnodes);
            return -1;
        }
        uint32_t depth = 0;
        for (uint32_t n = ctx->stack_node; n; n = p->node_parent[n])
            depth++;
        ctx->pcs = malloc(depth ? (size_t)depth * 8 : 1);
        if (!ctx->pcs) {
            hr_err(err, "out of memory");
            return -1;
        }
        uint32_t d = 0;
        for (uint32_t n = ctx->stack_node; n; n = p->node_parent[n])
            ctx->pcs[d++] = p->node_pc[n];
        ctx->depth = depth;
        ctx->stack_by_ref = 0;
    }
    free(p->node_pc);
    free(p->node_parent);
    p->node_pc = NULL;
    p->node_parent = NULL;
    p->nodes_cap = 0;
    return 0;
}

/* One HIB record's content, from a HIB record or a PACKED entry. */
static int hr_add_hib(struct hr_profile *p, const struct hpf_hib *h, char *err, const char *where)
{
    struct hr_context *ctx = hr_context_for(p, h->context_id, err, where);
    if (!ctx)
        return -1;
    if (ctx->has_hib) {
        hr_hib_merge(&ctx->hib, h);
    } else {
        ctx->hib = *h;
        ctx->has_hib = 1;
    }
    return 0;
}

/* One LIVE record's content, from a LIVE record or a PACKED entry. */
static int hr_add_live(struct hr_profile *p, const struct hpf_live *l, char *err, const char *where)
{
    struct hr_context *ctx = hr_context_for(p, l->context_id, err, where);
    if (!ctx)
        return -1;
    if (ctx->has_live) {
        hr_err(err, "second LIVE record for context %u (%s)", l->context_id, where);
        return -1;
    }
    ctx->live = *l;
    ctx->has_live = 1;
    return 0;
}

/* A fixed-size HIB or LIVE record. */
static int hr_parse_hib_live(struct hr_profile *p, struct hr_cur *c, uint32_t type, char *err,
                             uint64_t off)
{
    union {
        struct hpf_hib hib;
        struct hpf_live live;
    } r;
    const char *name = type == HPF_REC_HIB ? "HIB" : "LIVE";
    memset(&r, 0, sizeof r);
    /* A HIB of the first layout (no write counts) is shorter: the missing tail is 0. */
    size_t n = type == HPF_REC_LIVE ? sizeof r.live
               : c->left < sizeof r.hib && c->left >= HPF_HIB_MIN_SIZE ? c->left : sizeof r.hib;
    if (hr_cur_fixed(c, &r, n, name, off, err))
        return -1;
    char where[64];
    snprintf(where, sizeof where, "%s record at offset %llu", name, (unsigned long long)off);
    return type == HPF_REC_HIB ? hr_add_hib(p, &r.hib, err, where)
                               : hr_add_live(p, &r.live, err, where);
}

/* PACKED: HIB or LIVE records, each field a LEB128 number (docs/FORMAT.md). */
static int hr_parse_packed(struct hr_profile *p, struct hr_cur *c, char *err, uint64_t off)
{
    struct hpf_packed h;
    if (hr_cur_fixed(c, &h, sizeof h, "PACKED", off, err))
        return -1;
    const struct hpf_field *fields;
    size_t known;
    if (h.type == HPF_REC_HIB) {
        fields = hpf_hib_fields;
        known = HPF_HIB_NFIELDS;
    } else if (h.type == HPF_REC_LIVE) {
        fields = hpf_live_fields;
        known = HPF_LIVE_NFIELDS;
    } else {
        hr_err(err, "PACKED record at offset %llu holds records of type %u (only HIB and LIVE "
               "can be packed)", (unsigned long long)off, h.type);
        return -1;
    }
    /* A number takes a byte at least: bound the entries before decoding them. */
    if (h.nfields == 0 || (uint64_t)h.count * h.nfields > c->left) {
        hr_err(err, "PACKED record at offset %llu: %u entries of %u fields do not fit in the "
               "record", (unsigned long long)off, h.count, h.nfields);
        return -1;
    }
    for (uint32_t i = 0; i < h.count; i++) {
        union {
            struct hpf_hib hib;
            struct hpf_live live;
        } rec;
        memset(&rec, 0, sizeof rec);
        for (uint32_t f = 0; f < h.nfields; f++) {
            uint64_t v;
            if (hr_cur_uleb(c, &v)) {
                hr_err(err, "PACKED record at offset %llu: entry %u overruns the record or is "
                       "badly encoded", (unsigned long long)off, i);
                return -1;
            }
            if (f >= known)
                continue; /* a field added after this reader */
            if (fields[f].size == 4) {
                if (v > UINT32_MAX) {
                    hr_err(err, "PACKED record at offset %llu: entry %u, field %u: %llu does not "
                           "fit in 32 bits", (unsigned long long)off, i, f, (unsigned long long)v);
                    return -1;
                }
                uint32_t v32 = (uint32_t)v;
                memcpy((char *)&rec + fields[f].offset, &v32, 4);
            } else {
                memcpy((char *)&rec + fields[f].offset, &v, 8);
            }
        }
        char where[96];
        snprintf(where, sizeof where, "entry %u of the PACKED record at offset %llu", i,
                 (unsigned long long)off);
        if (h.type == HPF_REC_HIB ? hr_add_hib(p, &rec.hib, err, where)
                                  : hr_add_live(p, &rec.live, err, where))
            return -1;
    }
    if (c->left) {
        hr_err(err, "PACKED record at offset %llu: %zu bytes after its %u entries",
               (unsigned long long)off, c->left, h.count);
        return -1;
    }
    return 0;
}

static int hr_parse_record(struct hr_profile *p, uint32_t type, struct hr_cur *c,
                           struct hr_seen *seen, char *err, uint64_t off)
{
    switch (type) {
    case HPF_REC_PROCESS:
        if (seen->process++) {
            hr_err(err, "second PROCESS record at offset %llu", (unsigned long long)off);
            return -1;
        }
        return hr_parse_process(p, c, err, off);
    case HPF_REC_MODULE:
        return hr_parse_module(p, c, err, off);
    case HPF_REC_STACK:
        return hr_parse_stack(p, c, err, off);
    case HPF_REC_HIB:
    case HPF_REC_LIVE:
        return hr_parse_hib_live(p, c, type, err, off);
    case HPF_REC_SUMMARY: {
        if (seen->summary++) {
            hr_err(err, "second SUMMARY record at offset %llu", (unsigned long long)off);
            return -1;
        }
        /* A record of the first layout (no killed_by) is shorter: the missing tail is 0. */
        size_t have = c->left < sizeof p->summary ? c->left : sizeof p->summary;
        const void *fixed = have >= HPF_SUMMARY_MIN_SIZE ? hr_cur_take(c, have) : NULL;
        if (!fixed) {
            hr_err(err, "SUMMARY record at offset %llu too short", (unsigned long long)off);
            return -1;
        }
        memset(&p->summary, 0, sizeof p->summary);
        memcpy(&p->summary, fixed, have);
        return 0;
    }
    case HPF_REC_END: {
        struct hpf_end e;
        if (hr_cur_fixed(c, &e, sizeof e, "END", off, err))
            return -1;
        if (e.records != p->records) {
            hr_err(err, "END record counts %llu records but %llu precede it",
                   (unsigned long long)e.records, (unsigned long long)p->records);
            return -1;
        }
        seen->end = 1;
        return 0;
    }
    case HPF_REC_PAD:
        return 0; /* zero bytes that lengthen a profile written over a longer one */
    case HPF_REC_FRAMES:
        if (p->version < 2)
            break;
        return hr_parse_frames(p, c, err, off);
    case HPF_REC_STACK_REFS:
        if (p->version < 2)
            break;
        return hr_parse_stack_refs(p, c, err, off);
    case HPF_REC_PACKED:
        if (p->version < 2)
            break;
        return hr_parse_packed(p, c, err, off);
    case HPF_REC_ACCESS:
        if (seen->access++) {
            hr_err(err, "second ACCESS record at offset %llu", (unsigned long long)off);
            return -1;
        }
        return hr_parse_access(p, c, err, off);
    case HPF_REC_ACCESS_HIST:
        return hr_parse_access_hist(p, c, err, off);
    default:
        break;
    }
    p->unknown_records++; /* a newer producer's record (or type 8, 9, 10 in version 1): skip it */
    return 0;
}

static int hr_check_header(const uint8_t *data, size_t size, size_t *first, uint32_t *version,
                           char *err)
{
    struct hpf_file_header h;
    if (size == 0) {
        hr_err(err, "empty file (the process made it but wrote no profile into it)");
        return -1;
    }
    if (size < 8 || memcmp(data, HPF_MAGIC, 8) != 0) {
        hr_err(err, "not a heapprof profile (bad magic)");
        return -1;
    }
    if (size < sizeof h) {
        hr_err(err, "truncated file header");
        return -1;
    }
    memcpy(&h, data, sizeof h);
    if (h.endian_check == __builtin_bswap32(HPF_ENDIAN_CHECK)) {
        hr_err(err, "wrong endianness (profile written on a big-endian machine)");
        return -1;
    }
    if (h.endian_check != HPF_ENDIAN_CHECK) {
        hr_err(err, "bad endianness check value 0x%08x", h.endian_check);
        return -1;
    }
    if (h.version < HPF_VERSION_MIN || h.version > HPF_VERSION) {
        /* Byte-swapped version numbers are caught above: the endian check comes first. */
        hr_err(err, "unsupported format version %u (this reader knows %u to %u)", h.version,
               HPF_VERSION_MIN, HPF_VERSION);
        return -1;
    }
    if (h.header_size < sizeof h || h.header_size % 8 || h.header_size > size) {
        hr_err(err, "bad header size %u", h.header_size);
        return -1;
    }
    *first = h.header_size;
    *version = h.version;
    return 0;
}

int hr_profile_parse(struct hr_profile *p, const char *path, uint8_t *data, size_t size,
                     char err[HR_ERR_MAX])
{
    memset(p, 0, sizeof *p);
    p->data = data;
    p->size = size;
    p->path = strdup(path);
    if (!p->path) {
        hr_err(err, "out of memory");
        return -1;
    }
    size_t off;
    if (hr_check_header(data, size, &off, &p->version, err))
        return -1;

    struct hr_seen seen = {0};
    while (off < size) {
        struct hpf_record_header rh;
        if (seen.end) {
            hr_err(err, "%llu bytes after the END record", (unsigned long long)(size - off));
            return -1;
        }
        /* A record that runs past the end of the file is where a writer was cut short, unless
         * its type says it is damage (hr_cut_or_corrupt). */
        size_t have = size - off;
        if (have < sizeof rh) {
            if (hr_cut_or_corrupt(data + off, have, p->version))
                break;
            hr_err(err, "truncated record header at offset %zu", off);
            return -1;
        }
        memcpy(&rh, data + off, sizeof rh);
        size_t avail = have - sizeof rh;
        if (rh.size > avail) {
            if (hr_cut_or_corrupt(data + off, have, p->version))
                break;
            hr_err(err, "%s record at offset %zu: size %llu overflows the file (%zu bytes left)",
                   hr_type_name(rh.type), off, (unsigned long long)rh.size, avail);
            return -1;
        }
        /* A payload whose padding is cut is whole: read, and the file ends after it. */
        size_t padded = ((size_t)rh.size + 7) & ~(size_t)7;
        size_t step = padded > avail ? have : sizeof rh + padded;
        struct hr_cur c = {data + off + sizeof rh, (size_t)rh.size};
        if (hr_parse_record(p, rh.type, &c, &seen, err, off))
            return -1;
        if (!seen.end)
            p->records++;
        off += step;
    }
    int cut = !seen.end;
    if (!cut && !seen.process) {
        hr_err(err, "no PROCESS record");
        return -1;
    }
    if (!cut && !seen.summary) {
        hr_err(err, "no SUMMARY record");
        return -1;
    }
    if (hr_resolve_stacks(p, cut, err))
        return -1;
    if (cut && hr_cut_finish(p, seen.process, seen.summary, off, err))
        return -1;
    hr_access_resolve_modules(p);
    return 0;
}

void hr_profile_free(struct hr_profile *p)
{
    for (size_t i = 0; i < p->ncontexts; i++) {
        free(p->contexts[i].pcs);
        free(p->contexts[i].hist);
        free(p->contexts[i].word_hist);
        free(p->contexts[i].word_sat);
    }
    free(p->access.modules);
    for (size_t i = 0; i < p->nmodules; i++)
        free(p->modules[i].segs);
    free(p->contexts);
    free(p->node_pc);
    free(p->node_parent);
    free(p->index);
    free(p->modules);
    free(p->argv);
    for (size_t i = 0; i < p->nsources; i++)
        free(p->sources[i].path);
    free(p->sources);
    free(p->data);
    free(p->path);
    memset(p, 0, sizeof *p);
}
