/* Figures derived from the access data of a profile: reads, densities, byte-seconds held, and
 * the two views the text report adds when a profile has access data (cold and hottest
 * contexts). Pure functions of the parsed profile. */
#include <stdlib.h>

#include "hr_profile.h"

int hr_access_rw_apart(const struct hr_profile *p)
{
    uint32_t m = p->access.rec.modes;
    return p->access.present && !(m & HPF_ACCESS_INLINE) &&
           (m & (HPF_ACCESS_CALLBACKS | HPF_ACCESS_GCC));
}

uint32_t hr_access_granule(const struct hr_profile *p)
{
    return p->access.present && p->access.rec.granule ? p->access.rec.granule : 64;
}

size_t hr_access_mode_names(uint32_t modes, const char *names[3])
{
    size_t n = 0;
    if (modes & HPF_ACCESS_INLINE)
        names[n++] = "inline";
    if (modes & HPF_ACCESS_CALLBACKS)
        names[n++] = "callbacks";
    if (modes & HPF_ACCESS_GCC)
        names[n++] = "gcc";
    return n;
}

uint64_t hr_access_reads(const struct hpf_hib *h)
{
    return h->total_access_count > h->total_write_count
               ? h->total_access_count - h->total_write_count : 0;
}

double hr_access_density(const struct hpf_hib *h)
{
    return h->total_size ? (double)h->total_access_count / (double)h->total_size : 0.0;
}

double hr_access_density_per_s(const struct hpf_hib *h)
{
    if (!h->total_lifetime_ms || !h->alloc_count)
        return -1.0;
    double avg_life_s = (double)h->total_lifetime_ms / (double)h->alloc_count / 1000.0;
    return hr_access_density(h) / avg_life_s;
}

double hr_access_byte_seconds(const struct hpf_hib *h)
{
    if (!h->alloc_count)
        return 0.0;
    return (double)h->total_size * ((double)h->total_lifetime_ms / (double)h->alloc_count) / 1000.0;
}

/* qsort has no context argument: the key per context travels in a file-static array, as the
 * tool is single-threaded. */
static const double *hr_keys;
static const struct hr_context *hr_base;

static int hr_by_key(const void *a, const void *b)
{
    const struct hr_context *x = *(struct hr_context *const *)a;
    const struct hr_context *y = *(struct hr_context *const *)b;
    double kx = hr_keys[x - hr_base], ky = hr_keys[y - hr_base];
    if (kx != ky)
        return kx > ky ? -1 : 1;
    return x->context_id < y->context_id ? -1 : x->context_id > y->context_id;
}

/* Orders v[0..n) by keys (indexed by position in p->contexts), largest first. */
static void hr_order(const struct hr_profile *p, struct hr_context **v, size_t n,
                     const double *keys)
{
    hr_keys = keys;
    hr_base = p->contexts;
    qsort(v, n, sizeof *v, hr_by_key);
}

size_t hr_access_cold(const struct hr_profile *p, struct hr_context **v)
{
    if (!p->access.present || !p->ncontexts)
        return 0;
    double *keys = malloc(p->ncontexts * sizeof *keys);
    if (!keys)
        return 0;
    double held = 0, accesses = 0;
    for (size_t i = 0; i < p->ncontexts; i++) {
        keys[i] = hr_access_byte_seconds(&p->contexts[i].hib);
        held += keys[i];
        accesses += (double)p->contexts[i].hib.total_access_count;
    }
    size_t n = 0;
    for (size_t i = 0; i < p->ncontexts && held > 0; i++) {
        const struct hpf_hib *h = &p->contexts[i].hib;
        /* accesses / keys[i] < (accesses over all) / held / 10, without dividing by 0 */
        if (keys[i] > 0 && (double)h->total_access_count * held * 10 < accesses * keys[i])
            v[n++] = &p->contexts[i];
    }
    hr_order(p, v, n, keys);
    free(keys);
    return n;
}

size_t hr_access_hottest(const struct hr_profile *p, struct hr_context **v)
{
    if (!p->access.present || !p->ncontexts)
        return 0;
    double *keys = malloc(p->ncontexts * sizeof *keys);
    if (!keys)
        return 0;
    size_t n = 0;
    for (size_t i = 0; i < p->ncontexts; i++) {
        keys[i] = hr_access_density(&p->contexts[i].hib);
        if (p->contexts[i].hib.total_access_count)
            v[n++] = &p->contexts[i];
    }
    hr_order(p, v, n, keys);
    free(keys);
    return n;
}
