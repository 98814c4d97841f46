/* HEAPPROF_OPTIONS parsing: one pass over "k=v:k=v" against the table in options.def. */
#include "rt/rt.h"

#include <signal.h>
#include <string.h>

struct hp_options hp_opt;

enum { K_BOOL, K_INT, K_SIG, K_STR };

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
#define HP_KIND_SIG K_SIG
#define HP_KIND_STR K_STR
#define HP_DEF_INT_BOOL(d) (uint64_t)(d)
#define HP_DEF_INT_INT(d) (uint64_t)(d)
#define HP_DEF_INT_SIG(d) (uint64_t)(d)
#define HP_DEF_INT_STR(d) 0
#define HP_DEF_STR_BOOL(d) 0
#define HP_DEF_STR_INT(d) 0
#define HP_DEF_STR_SIG(d) 0
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
    else if (r->kind == K_INT || r->kind == K_SIG)
        *(uint64_t *)base = r->def_int;
    else
        hp_strlcpy(base, r->def_str, HP_OPT_STR_MAX);
}

static int lower(int c) { return c >= 'A' && c <= 'Z' ? c + ('a' - 'A') : c; }

/* Do the n bytes at a spell the string b, letter case aside? */
static int same_name(const char *a, size_t n, const char *b)
{
    size_t i = 0;
    for (; i < n && b[i]; i++)
        if (lower((unsigned char)a[i]) != lower((unsigned char)b[i]))
            return 0;
    return i == n && !b[i];
}

/* A signal by name, as kill(1) takes it: USR2, SIGUSR2, usr2; RTMIN, RTMIN+N, RTMAX-N. */
static int parse_signal(const char *v, size_t n, uint64_t *out)
{
    if (n > 3 && same_name(v, 3, "SIG")) {
        v += 3;
        n -= 3;
    }
    for (int s = 1; s < 65; s++) {
        const char *name = sigabbrev_np(s); /* a static table: no allocation, no lock */
        if (name && same_name(v, n, name)) {
            *out = (uint64_t)s;
            return 0;
        }
    }
    int base = 0, sign = 0;
    if (n >= 5 && same_name(v, 5, "RTMIN"))
        base = SIGRTMIN, sign = 1;
    else if (n >= 5 && same_name(v, 5, "RTMAX"))
        base = SIGRTMAX, sign = -1;
    else
        return -1;
    uint64_t k = 0;
    if (n > 5 && (v[5] != (sign > 0 ? '+' : '-') || hp_parse_u64(v + 6, n - 6, &k) != 0 || k > 64))
        return -1;
    int64_t s = base + sign * (int64_t)k;
    if (s < SIGRTMIN || s > SIGRTMAX)
        return -1;
    *out = (uint64_t)s;
    return 0;
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
        else if ((hp_parse_u64(val, vlen, &v) != 0 &&
                  !(r->kind == K_SIG && parse_signal(val, vlen, &v) == 0)) ||
                 (r->kind == K_BOOL && v > 1)) {
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

/* Bring *v into [lo, hi]; 1 (and said) if that changed what the user asked for in a way that
 * matters: more than the shim can give, or (say_low) less than it will use. Table sizes below
 * their minimum just get the smallest table, as they get the next power of two. */
static int clamp(uint64_t *v, const char *name, uint64_t lo, uint64_t hi, int say_low)
{
    uint64_t was = *v;
    if (was >= lo && was <= hi)
        return 0;
    *v = was < lo ? lo : hi;
    if (was < lo && !say_low)
        return 0;
    hp_warn("option %s=%llu is out of range (%llu..%llu): using %llu", name, (unsigned long long)was,
            (unsigned long long)lo, (unsigned long long)hi, (unsigned long long)*v);
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
                char tmp[64];
                size_t n = (size_t)(end - p) < sizeof tmp - 1 ? (size_t)(end - p) : sizeof tmp - 1;
                hp_memcpy(tmp, p, n);
                tmp[n] = 0;
                hp_warn("option '%s' has no '=value' part", tmp);
                problems++;
            } else {
                problems += apply(o, p, (size_t)(eq - p), eq + 1, (size_t)(end - eq - 1));
            }
        }
        p = *end ? end + 1 : end;
    }
    /* Values outside the range the rest of the shim relies on are brought into it, and said
     * when it matters: a user who asked for stack_depth=1000 should know stacks stop at 256. */
    problems += clamp(&o->stack_depth, "stack_depth", 1, 256, 1);
    problems += clamp(&o->hib_table_ways, "hib_table_ways", 1, 16, 0);
    problems += clamp(&o->hib_table_size, "hib_table_size", o->hib_table_ways, 1u << 30, 0);
    o->hib_table_size = hp_round_pow2(o->hib_table_size);
    problems += clamp(&o->thread_cache_size, "thread_cache_size", 16, 65536, 0);
    o->thread_cache_size = hp_round_pow2(o->thread_cache_size);
    problems += clamp(&o->max_contexts, "max_contexts", 16, 1u << 30, 0);
    problems += clamp(&o->metadata_budget_mb, "metadata_budget_mb", 16, 1u << 20, 1);
    problems += clamp(&o->peak_slack_kb, "peak_slack_kb", 0, 1u << 20, 0);
    problems += clamp(&o->access_hist_granules, "access_hist_granules", 0, 1024, 0);
    problems += clamp(&o->access_word_hist_max, "access_word_hist_max", 0, 4096, 0);
    if (o->dump_signal >= 65) {
        hp_warn("option dump_signal=%llu is not a signal number (1..64): no dump signal",
                (unsigned long long)o->dump_signal);
        o->dump_signal = 0;
        problems++;
    }
    /* A fault's signal comes back as soon as its handler returns (the faulting instruction runs
     * again): a dump handler there would write dumps for ever instead of letting the program
     * die. */
    uint64_t ds = o->dump_signal;
    if (ds == SIGSEGV || ds == SIGBUS || ds == SIGILL || ds == SIGFPE || ds == SIGTRAP || ds == SIGSYS) {
        hp_warn("option dump_signal=%llu (SIG%s) is a fault's signal, which returns as soon as its "
                "handler does: no dump signal (dump_on_kill writes the profile when it ends the "
                "process)", (unsigned long long)ds, sigabbrev_np((int)ds));
        o->dump_signal = 0;
        problems++;
    }
    return problems;
}

void hp_options_print(const struct hp_options *o, int fd)
{
    char line[512];
    size_t n = hp_fmt(line, sizeof line, "heapprof: options (HEAPPROF_OPTIONS=\"key=value:...\"):\n");
    hp_write_msg(fd, line, n);
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
        hp_write_msg(fd, line, n);
    }
}
