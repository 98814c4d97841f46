/* The folded-stacks output (--format folded): "outer;...;inner VALUE" per distinct stack, the
 * input of flamegraph.pl, inferno and speedscope. */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "hr_frames.h"
#include "hr_output.h"

/* A frame name with the bytes the format gives a meaning replaced: ';' separates frames and a
 * line ends the stack, so ';' becomes ':' and control characters '?'. Bytes that are not
 * UTF-8 become '?' too, since the consuming tools read text. Never longer than s: a malloc'ed
 * copy, or NULL when out of memory. */
static char *hr_folded_name(const char *s)
{
    const unsigned char *u = (const unsigned char *)s;
    size_t len = strlen(s), o = 0;
    char *out = malloc(len + 1);
    if (!out)
        return NULL;
    for (size_t i = 0; i < len;) {
        size_t n = hr_utf8_seq_len(u + i, len - i);
        if (n == 0 || (n == 1 && (u[i] < 0x20 || u[i] == 0x7f))) {
            out[o++] = '?';
            i += n ? n : 1;
        } else if (u[i] == ';') {
            out[o++] = ':';
            i++;
        } else {
            memcpy(out + o, u + i, n);
            o += n;
            i += n;
        }
    }
    out[o] = 0;
    return out;
}

/* The path of node, outermost frame first, with names[] the frames' escaped names. path has
 * room for t->nnodes entries. */
static void hr_folded_path(FILE *out, const struct hr_ftab *t, char *const *names, uint32_t node,
                           uint32_t *path)
{
    size_t n = 0;
    for (; node; node = t->nodes[node].parent)
        path[n++] = node;
    if (!n) {
        fputs("[no stack]", out);
        return;
    }
    while (n-- > 0) {
        fputs(names[t->nodes[path[n]].frame], out);
        if (n)
            fputc(';', out);
    }
}

/* Sums the contexts' values per node (new and, in a diff, base) and lists the nodes in the
 * order their first context has by --sort. Returns how many nodes are listed, -1 on OOM. */
static long hr_folded_sum(const struct hr_profile *p, const struct hr_ftab *t,
                          const struct hr_output_opts *opts, int64_t *val, int64_t *base,
                          uint32_t *order)
{
    struct hr_context **ctx = hr_contexts_sorted(p, opts->sort);
    if (!ctx)
        return -1;
    long n = 0;
    for (size_t i = 0; i < p->ncontexts; i++) {
        const struct hr_context *c = ctx[i];
        uint32_t node = t->ctx_node[c - p->contexts];
        int64_t v = hr_metric_value(p, c, opts->metric);
        int64_t now = (int64_t)hr_metric_raw(c, opts->metric);
        if (!val[node] && !base[node])
            order[n++] = node; /* may come again if all its values are 0: skipped below */
        if (p->diff_base) {
            val[node] = hr_add64(val[node], now);
            /* the base's figure, as hr_metric_value defines the diff */
            base[node] = hr_add64(base[node], hr_sub64(now, v));
        } else {
            val[node] = hr_add64(val[node], v);
        }
    }
    free(ctx);
    return n;
}

int hr_write_folded(FILE *out, const struct hr_profile *p, const struct hr_output_opts *opts)
{
    struct hr_symbolizer *sym = hr_symbolizer_new(p, opts->warn);
    struct hr_ftab t;
    if (!sym || hr_ftab_build(&t, p, sym, 1)) {
        hr_symbolizer_free(sym);
        return -1;
    }
    int64_t *val = calloc(t.nnodes, sizeof *val), *base = calloc(t.nnodes, sizeof *base);
    uint32_t *order = malloc((p->ncontexts + 1) * sizeof *order);
    uint32_t *path = malloc(t.nnodes * sizeof *path);
    uint8_t *done = calloc(t.nnodes, 1);
    char **names = calloc(t.nframes + 1, sizeof *names);
    long n = val && base && order && path && done && names
                 ? hr_folded_sum(p, &t, opts, val, base, order) : -1;
    for (size_t i = 0; n >= 0 && i < t.nframes; i++)
        if (!(names[i] = hr_folded_name(t.strs[t.frames[i].name])))
            n = -1;
    for (long i = 0; i < n; i++) {
        uint32_t node = order[i];
        /* A stack whose figures are all 0 adds nothing to a flame graph; leave it out. */
        if (done[node] || (!val[node] && !base[node]))
            continue;
        done[node] = 1;
        hr_folded_path(out, &t, names, node, path);
        if (p->diff_base)
            fprintf(out, " %" PRId64, base[node]);
        fprintf(out, " %" PRId64 "\n", val[node]);
    }
    free(val);
    free(base);
    free(order);
    free(path);
    free(done);
    for (size_t i = 0; names && i < t.nframes; i++)
        free(names[i]);
    free(names);
    hr_ftab_free(&t);
    hr_symbolizer_free(sym);
    return n < 0 ? -1 : 0;
}
