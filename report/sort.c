/* Report order of contexts: descending by the chosen key, then ascending context_id so the
 * output is the same on every run. */
#include <stdlib.h>
#include <string.h>

#include "hr_profile.h"

static const char *const hr_sort_names[] = {
    [HR_SORT_TOTAL_SIZE] = "total_size",
    [HR_SORT_ALLOC_COUNT] = "alloc_count",
    [HR_SORT_LIVE_SIZE] = "live_size",
    [HR_SORT_PEAK_LIVE_SIZE] = "peak_live_size",
    [HR_SORT_MAX_LIVE_SIZE] = "max_live_size",
    [HR_SORT_TOTAL_LIFETIME_MS] = "total_lifetime_ms",
    [HR_SORT_TOTAL_ACCESS_COUNT] = "total_access_count",
    [HR_SORT_ACCESS_DENSITY] = "access_density",
};

int hr_sort_key_parse(const char *name, enum hr_sort_key *key)
{
    for (size_t i = 0; i < sizeof hr_sort_names / sizeof hr_sort_names[0]; i++) {
        if (strcmp(name, hr_sort_names[i]) == 0) {
            *key = (enum hr_sort_key)i;
            return 0;
        }
    }
    return -1;
}

const char *hr_sort_key_name(enum hr_sort_key key)
{
    return hr_sort_names[key];
}

static uint64_t hr_key_value(const struct hr_context *c, enum hr_sort_key key)
{
    switch (key) {
    case HR_SORT_ALLOC_COUNT: return c->hib.alloc_count;
    case HR_SORT_LIVE_SIZE: return c->live.live_size;
    case HR_SORT_PEAK_LIVE_SIZE: return c->live.peak_live_size;
    case HR_SORT_MAX_LIVE_SIZE: return c->live.max_live_size;
    case HR_SORT_TOTAL_LIFETIME_MS: return c->hib.total_lifetime_ms;
    case HR_SORT_TOTAL_ACCESS_COUNT: return c->hib.total_access_count;
    case HR_SORT_ACCESS_DENSITY: /* compared as a ratio in hr_cmp */
    case HR_SORT_TOTAL_SIZE: break;
    }
    return c->hib.total_size;
}

double hr_sort_key_change(const struct hr_context *c, enum hr_sort_key key)
{
    if (key == HR_SORT_ACCESS_DENSITY)
        return hr_access_density(&c->hib) - (c->base ? hr_access_density(&c->base->hib) : 0);
    return (double)hr_key_value(c, key) - (c->base ? (double)hr_key_value(c->base, key) : 0);
}

/* qsort has no context argument; the key travels in file-statics, which is fine for a
 * single-threaded tool. */
static enum hr_sort_key hr_cur_key;
static int hr_cur_diff;

static int hr_cmp(const void *a, const void *b)
{
    const struct hr_context *x = *(struct hr_context *const *)a;
    const struct hr_context *y = *(struct hr_context *const *)b;
    if (hr_cur_diff) {
        double dx = hr_sort_key_change(x, hr_cur_key), dy = hr_sort_key_change(y, hr_cur_key);
        dx = dx < 0 ? -dx : dx;
        dy = dy < 0 ? -dy : dy;
        if (dx != dy)
            return dx > dy ? -1 : 1;
    } else if (hr_cur_key == HR_SORT_ACCESS_DENSITY) {
        double dx = hr_access_density(&x->hib), dy = hr_access_density(&y->hib);
        if (dx != dy)
            return dx > dy ? -1 : 1;
    } else {
        uint64_t vx = hr_key_value(x, hr_cur_key), vy = hr_key_value(y, hr_cur_key);
        if (vx != vy)
            return vx > vy ? -1 : 1;
    }
    return x->context_id < y->context_id ? -1 : x->context_id > y->context_id;
}

struct hr_context **hr_contexts_sorted(const struct hr_profile *p, enum hr_sort_key key)
{
    struct hr_context **v = malloc((p->ncontexts ? p->ncontexts : 1) * sizeof *v);
    if (!v)
        return NULL;
    for (size_t i = 0; i < p->ncontexts; i++)
        v[i] = &p->contexts[i];
    hr_cur_key = key;
    hr_cur_diff = p->diff_base != NULL;
    qsort(v, p->ncontexts, sizeof *v, hr_cmp);
    return v;
}
