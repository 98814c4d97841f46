/* HEAPPROF_OPTIONS parsing: one pass over "k=v:k=v" against the table in options.def. */
#include "options.h"
#include "util.h"

struct hp_options hp_opt;

enum { K_BOOL, K_INT, K_STR };

struct opt_row {
    const char *name;
    int kind;
    size_t offset;
    uint64_t def_int;
    const char *def_str;
    const char *doc;
};

#define HP_KIND_BOOL K_BOOL
#define HP_KIND_INT K_INT
#define HP_KIND_STR K_STR
#define HP_DEF_INT_BOOL(d) (uint64_t)(d)
#define HP_DEF_INT_INT(d) (uint64_t)(d)
#define HP_DEF_INT_STR(d) 0
#define HP_DEF_STR_BOOL(d) 0
#define HP_DEF_STR_INT(d) 0
#define HP_DEF_STR_STR(d) d

static const struct opt_row rows[] = {
#define HP_OPTION(kind, name, def, doc) \
    {#name, HP_KIND_##kind, __builtin_offsetof(struct hp_options, name), HP_DEF_INT_##kind(def), \
     HP_DEF_STR_##kind(def), doc},
#include "options.def"
#undef HP_OPTION
};

#define NROWS (sizeof rows / sizeof rows[0])

static void set_default(struct hp_options *o, const struct opt_row *r)
{
    char *base = (char *)o + r->offset;
    if (r->kind == K_BOOL)
        *(int *)base = (int)r->def_int;
    else if (r->kind == K_INT)
        *(uint64_t *)base = r->def_int;
    else
        hp_strlcpy(base, r->def_str, HP_OPT_STR_MAX);
}

static int apply(struct hp_options *o, const char *key, size_t klen, const char *val, size_t vlen)
{
    for (size_t i = 0; i < NROWS; i++) {
        const struct opt_row *r = &rows[i];
        if (hp_strlen(r->name) != klen || hp_strncmp(r->name, key, klen) != 0)
            continue;
        char *base = (char *)o + r->offset;
        if (r->kind == K_STR) {
            if (vlen >= HP_OPT_STR_MAX) {
                hp_warn("option %s: value longer than %d bytes, ignored", r->name, HP_OPT_STR_MAX - 1);
                return 1;
            }
            hp_memcpy(base, val, vlen);
            base[vlen] = 0;
            return 0;
        }
        uint64_t v;
        if (r->kind == K_BOOL && ((vlen == 4 && !hp_strncmp(val, "true", 4)) ||
                                  (vlen == 3 && !hp_strncmp(val, "yes", 3))))
            v = 1;
        else if (r->kind == K_BOOL && ((vlen == 5 && !hp_strncmp(val, "false", 5)) ||
                                       (vlen == 2 && !hp_strncmp(val, "no", 2))))
            v = 0;
        else if (hp_parse_u64(val, vlen, &v) != 0 || (r->kind == K_BOOL && v > 1)) {
            char tmp[64];
            size_t n = vlen < sizeof tmp - 1 ? vlen : sizeof tmp - 1;
            hp_memcpy(tmp, val, n);
            tmp[n] = 0;
            hp_warn("option %s: bad value '%s', keeping the default", r->name, tmp);
            return 1;
        }
        if (r->kind == K_BOOL)
            *(int *)base = (int)v;
        else
            *(uint64_t *)base = v;
        return 0;
    }
    char tmp[64];
    size_t n = klen < sizeof tmp - 1 ? klen : sizeof tmp - 1;
    hp_memcpy(tmp, key, n);
    tmp[n] = 0;
    hp_warn("unknown option '%s' (help=1 lists them)", tmp);
    return 1;
}

int hp_options_parse(struct hp_options *o, const char *spec)
{
    int problems = 0;
    for (size_t i = 0; i < NROWS; i++)
        set_default(o, &rows[i]);
    if (!spec)
        return 0;
    const char *p = spec;
    while (*p) {
        const char *end = p;
        while (*end && *end != ':')
            end++;
        if (end > p) {
            const char *eq = p;
            while (eq < end && *eq != '=')
                eq++;
            if (eq == end) {
                hp_warn("option '%s' has no '=value' part", p);
                problems++;
            } else {
                problems += apply(o, p, (size_t)(eq - p), eq + 1, (size_t)(end - eq - 1));
            }
        }
        p = *end ? end + 1 : end;
    }
    /* Clamp values whose range the rest of the shim relies on. */
    if (o->stack_depth < 1)
        o->stack_depth = 1;
    if (o->stack_depth > 256)
        o->stack_depth = 256;
    if (o->hib_table_ways < 1)
        o->hib_table_ways = 1;
    if (o->hib_table_ways > 16)
        o->hib_table_ways = 16;
    if (o->hib_table_size > (1u << 30))
        o->hib_table_size = 1u << 30;
    if (o->hib_table_size < o->hib_table_ways)
        o->hib_table_size = o->hib_table_ways;
    o->hib_table_size = hp_round_pow2(o->hib_table_size);
    if (o->thread_cache_size < 16)
        o->thread_cache_size = 16;
    if (o->thread_cache_size > 65536)
        o->thread_cache_size = 65536;
    o->thread_cache_size = hp_round_pow2(o->thread_cache_size);
    if (o->max_contexts < 16)
        o->max_contexts = 16;
    if (o->max_contexts > (1u << 30))
        o->max_contexts = 1u << 30;
    if (o->metadata_budget_mb < 16)
        o->metadata_budget_mb = 16;
    if (o->metadata_budget_mb > (1u << 20))
        o->metadata_budget_mb = 1u << 20;
    if (o->peak_slack_kb > (1u << 20))
        o->peak_slack_kb = 1u << 20;
    if (o->dump_signal >= 65)
        o->dump_signal = 0;
    return problems;
}

void hp_options_print(const struct hp_options *o, int fd)
{
    char line[512];
    size_t n = hp_fmt(line, sizeof line, "heapprof: options (HEAPPROF_OPTIONS=\"key=value:...\"):\n");
    hp_write_all(fd, line, n);
    for (size_t i = 0; i < NROWS; i++) {
        const struct opt_row *r = &rows[i];
        const char *base = (const char *)o + r->offset;
        if (r->kind == K_STR)
            n = hp_fmt(line, sizeof line, "  %s=%s\n      %s\n", r->name, base, r->doc);
        else if (r->kind == K_BOOL)
            n = hp_fmt(line, sizeof line, "  %s=%d\n      %s\n", r->name, *(const int *)base, r->doc);
        else
            n = hp_fmt(line, sizeof line, "  %s=%llu\n      %s\n", r->name,
                       (unsigned long long)*(const uint64_t *)base, r->doc);
        hp_write_all(fd, line, n);
    }
}
