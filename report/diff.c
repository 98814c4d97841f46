/* --diff BASE NEW...: the new profiles merged, the base laid out in the same address space so
 * that equal stacks have equal ids, and each new context pointed at its base counterpart. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hr_merge.h"
#include "merge_internal.h"

/* Contexts of the base that the new profiles lack: present in out with zero figures. */
static int hr_diff_add_vanished(struct hr_profile *out, const struct hr_profile *base)
{
    for (size_t i = 0; i < base->ncontexts; i++) {
        const struct hr_context *b = &base->contexts[i];
        if (hr_context_find(out, b->context_id))
            continue;
        struct hr_context *c = hr_context_get(out, b->context_id);
        if (!c)
            return -1;
        c->has_stack = b->has_stack;
        c->depth = b->depth;
        if (b->depth) {
            c->pcs = malloc(b->depth * sizeof *c->pcs);
            if (!c->pcs)
                return -1;
            memcpy(c->pcs, b->pcs, b->depth * sizeof *c->pcs);
        }
    }
    return 0;
}

int hr_profiles_diff(struct hr_profile *out, struct hr_profile *base_out,
                     const struct hr_profile *base, struct hr_profile *const *in, size_t n,
                     char err[HR_ERR_MAX])
{
    memset(out, 0, sizeof *out);
    memset(base_out, 0, sizeof *base_out);
    struct hr_merger m = {.n = n + 1};
    m.in = calloc(n + 1, sizeof *m.in);
    if (!m.in) {
        snprintf(err, HR_ERR_MAX, "out of memory");
        return -1;
    }
    /* The new side first: its modules keep their addresses where they can. */
    for (size_t i = 0; i < n; i++)
        m.in[i].p = in[i];
    m.in[n].p = base;
    m.in[n].group = 1;
    int r = hr_merge_run(&m, err) || hr_merge_group(&m, 0, out, err) ||
            hr_merge_group(&m, 1, base_out, err);
    if (!r && hr_diff_add_vanished(out, base_out)) {
        snprintf(err, HR_ERR_MAX, "out of memory");
        r = 1;
    }
    hr_merger_free(&m);
    if (r) {
        hr_profile_free(out);
        hr_profile_free(base_out);
        return -1;
    }
    /* Only now: adding contexts moves out's array, base_out's no longer changes. */
    for (size_t i = 0; i < out->ncontexts; i++)
        out->contexts[i].base = hr_context_find(base_out, out->contexts[i].context_id);
    out->diff_base = base_out;
    return 0;
}
