/* The JSON frame table (schema 2): each return address of the contexts written is symbolised
 * once and its frames (several where functions were inlined) written once; contexts then list
 * indices into the table, as DHAT's ftbl does. */
#include <inttypes.h>
#include <stdlib.h>

#include "hr_output.h"
#include "hr_symbolize.h"
#include "json_internal.h"

struct hr_ftab_slot {
    uint64_t pc;
    uint32_t first; /* index of the pc's innermost frame in the table */
    uint32_t count; /* frames of its chain; 0: empty slot */
};

struct hr_json_ftab {
    struct hr_ftab_slot *slots;
    size_t cap, used;
    uint32_t nframes;
};

static size_t hr_ftab_slot(const struct hr_json_ftab *t, uint64_t pc)
{
    uint64_t h = pc * 0x9e3779b97f4a7c15u;
    size_t s = (size_t)(h >> 20) & (t->cap - 1);
    while (t->slots[s].count && t->slots[s].pc != pc)
        s = (s + 1) & (t->cap - 1);
    return s;
}

static int hr_ftab_grow(struct hr_json_ftab *t)
{
    struct hr_json_ftab n = {.cap = t->cap ? t->cap * 2 : 4096, .used = t->used,
                             .nframes = t->nframes};
    n.slots = calloc(n.cap, sizeof *n.slots);
    if (!n.slots)
        return -1;
    for (size_t i = 0; i < t->cap; i++)
        if (t->slots[i].count)
            n.slots[hr_ftab_slot(&n, t->slots[i].pc)] = t->slots[i];
    free(t->slots);
    *t = n;
    return 0;
}

static void hr_ftab_entry(FILE *out, const struct hr_frame *g, int first)
{
    fprintf(out, "%s\n    {\"address\": \"0x%" PRIx64 "\", \"module\": ", first ? "" : ",", g->pc);
    hr_json_string(out, g->module, hr_cstr(g->module).len);
    fputs(", \"function\": ", out);
    hr_json_string(out, g->function, hr_cstr(g->function).len);
    fputs(", \"file\": ", out);
    hr_json_string(out, g->file, hr_cstr(g->file).len);
    fprintf(out, ", \"line\": %d, \"inlined\": %s}", g->line, g->inlined ? "true" : "false");
}

struct hr_json_ftab *hr_json_ftab_write(FILE *out, struct hr_context *const *v, size_t n,
                                        struct hr_symbolizer *sym)
{
    struct hr_json_ftab *t = calloc(1, sizeof *t);
    if (!t || hr_ftab_grow(t)) {
        free(t);
        return NULL;
    }
    fputs("  \"frame_table\": [", out);
    for (size_t i = 0; i < n; i++) {
        for (uint32_t d = 0; d < v[i]->depth; d++) {
            uint64_t pc = v[i]->pcs[d];
            size_t s = hr_ftab_slot(t, pc);
            if (t->slots[s].count)
                continue;
            if ((t->used + 1) * 2 > t->cap) {
                if (hr_ftab_grow(t)) {
                    hr_json_ftab_free(t);
                    return NULL;
                }
                s = hr_ftab_slot(t, pc);
            }
            struct hr_frame f;
            hr_symbolize(sym, pc, &f);
            t->slots[s] = (struct hr_ftab_slot){pc, t->nframes, 0};
            for (const struct hr_frame *g = &f; g; g = g->next) {
                hr_ftab_entry(out, g, t->nframes == 0);
                t->nframes++;
                t->slots[s].count++;
            }
            t->used++;
        }
    }
    fputs(t->nframes ? "\n  ],\n" : "],\n", out);
    return t;
}

void hr_json_ftab_refs(FILE *out, const struct hr_json_ftab *t, const struct hr_context *c)
{
    char buf[256]; /* written out whenever it may not hold one more index */
    size_t n = 0;
    buf[n++] = '[';
    for (uint32_t d = 0; d < c->depth; d++) {
        const struct hr_ftab_slot *s = &t->slots[hr_ftab_slot(t, c->pcs[d])];
        for (uint32_t k = 0; k < s->count; k++) {
            if (n + 24 > sizeof buf) {
                fwrite_unlocked(buf, 1, n, out);
                n = 0;
            }
            if (d || k) {
                buf[n++] = ',';
                buf[n++] = ' ';
            }
            n += hr_json_dec(buf + n, s->first + k);
        }
    }
    buf[n++] = ']';
    fwrite_unlocked(buf, 1, n, out);
}

void hr_json_ftab_free(struct hr_json_ftab *t)
{
    if (t)
        free(t->slots);
    free(t);
}
